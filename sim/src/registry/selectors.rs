//! Label selectors (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`) and field selectors
//! (`metadata.name=x`, `metadata.namespace!=y`, any dotted path to a scalar).

use serde_json::Value;

use crate::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    Gt(String, i64),
    Lt(String, i64),
}

/// A parsed label selector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Req>);

impl LabelSelector {
    /// Parses the `labelSelector` query parameter as `labels.Parse` does: a selector it refuses is the
    /// apiserver's 400 with its message.
    pub fn parse(s: &str) -> Result<LabelSelector, ApiError> {
        use crate::registry::label_parser::{Op, parse};
        let reqs = parse(s).map_err(ApiError::bad_request)?;
        Ok(LabelSelector(
            reqs.into_iter()
                .map(|(k, op, mut vs)| {
                    let first = || vs.first().cloned().unwrap_or_default();
                    let int = || first().parse::<i64>().unwrap_or_default();
                    match op {
                        Op::Eq => Req::Eq(k, first()),
                        Op::NotEq => Req::NotEq(k, first()),
                        Op::Gt => Req::Gt(k, int()),
                        Op::Lt => Req::Lt(k, int()),
                        Op::In => Req::In(k, std::mem::take(&mut vs)),
                        Op::NotIn => Req::NotIn(k, std::mem::take(&mut vs)),
                        Op::Exists => Req::Exists(k),
                        Op::NotExists => Req::NotExists(k),
                    }
                })
                .collect(),
        ))
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether an object's labels match.
    pub fn matches(&self, obj: &Value) -> bool {
        self.matches_labels(obj.pointer("/metadata/labels").and_then(Value::as_object))
    }

    /// Whether a label map (an object's `metadata.labels`, `None` when it has none) matches.
    pub fn matches_labels(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::NotEq(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
            Req::Gt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            Req::Lt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// A field selector's value unescaped as `fields.UnescapeValue` does.
fn unescape(v: &str) -> Result<String, ApiError> {
    let bad = |m: String| {
        Err(ApiError::bad_request(format!(
            "invalid field selector: {m}"
        )))
    };
    let mut out = String::with_capacity(v.len());
    let mut slash = false;
    for c in v.chars() {
        if slash {
            if !matches!(c, '\\' | ',' | '=') {
                return bad(format!("invalid escape sequence: \\{c}"));
            }
            out.push(c);
            slash = false;
            continue;
        }
        match c {
            '\\' => slash = true,
            ',' | '=' => return bad(format!("unescaped character in value: {}", c as u32)),
            c => out.push(c),
        }
    }
    if slash {
        return bad("invalid escape sequence: \\".into());
    }
    Ok(out)
}

/// `fields.EscapeValue`: a value put into a field selector term.
pub fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace(',', "\\,")
        .replace('=', "\\=")
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter as `fields.ParseSelector` does: terms split at
    /// unescaped commas (not trimmed, sorted), each at its first operator, values unescaped (`\\`,
    /// `\,`, `\=`); what it refuses is a 400 with its message.
    pub fn parse(s: &str) -> Result<FieldSelector, ApiError> {
        let mut terms = Vec::new();
        let (mut start, mut slash) = (0, false);
        for (i, c) in s.char_indices() {
            match c {
                _ if slash => slash = false,
                '\\' => slash = true,
                ',' => {
                    terms.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        terms.push(&s[start..]);
        terms.sort_unstable();
        let mut out = Vec::new();
        for part in terms.into_iter().filter(|p| !p.is_empty()) {
            let split = part.char_indices().find_map(|(i, _)| {
                ["!=", "==", "="]
                    .iter()
                    .find(|op| part[i..].starts_with(**op))
                    .map(|op| (&part[..i], *op, &part[i + op.len()..]))
            });
            let Some((k, op, v)) = split else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            out.push((k.to_string(), op != "!=", unescape(v)?));
        }
        Ok(FieldSelector(out))
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The field paths the selector names, to check or rename them.
    pub fn fields_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.0.iter_mut().map(|(field, _, _)| field)
    }

    /// Whether an object's fields match.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let ptr = format!("/{}", path.replace('.', "/"));
            let got = match obj.pointer(&ptr) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (got == *want) == *eq
        })
    }
}

#[cfg(test)]
mod parse_errors {
    use super::LabelSelector;

    #[test]
    fn operators_where_keys_or_values_belong_are_refused_as_kube_apiserver_does() {
        let e = LabelSelector::parse("=bad").expect_err("no key");
        assert_eq!(
            e.message,
            "found '=', expected: !, identifier, or 'end of string'"
        );
        let e = LabelSelector::parse("set===").expect_err("operator as value");
        assert_eq!(
            e.message,
            "unable to parse requirement: found '=', expected: identifier"
        );
        assert!(LabelSelector::parse("a=b,!c,d in (e)").is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let o = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        for (sel, want) in [
            ("app=web", true),
            ("app!=web", false),
            ("app in (web,api)", true),
            ("tier notin (front)", false),
            ("app,tier", true),
            ("!missing", true),
            ("app=web,tier=back", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).expect(sel).matches(&o),
                want,
                "{sel}"
            );
        }
    }

    #[test]
    fn field_selectors() {
        let o =
            json!({"metadata": {"name": "a", "namespace": "ns"}, "status": {"phase": "Running"}});
        assert!(
            FieldSelector::parse("metadata.name=a")
                .expect("parse")
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name!=a")
                .expect("parse")
                .matches(&o)
        );
        assert!(
            FieldSelector::parse("status.phase==Running,metadata.namespace=ns")
                .expect("parse")
                .matches(&o)
        );
        assert!(FieldSelector::parse("nonsense").is_err());
        let named = format!("metadata.name={}", escape_value("a,b=c\\d"));
        assert_eq!(named, "metadata.name=a\\,b\\=c\\\\d");
        let o = json!({"metadata": {"name": "a,b=c\\d"}});
        assert!(FieldSelector::parse(&named).expect("escaped").matches(&o));
        assert_eq!(
            FieldSelector::parse("a=b=c")
                .expect_err("unescaped")
                .message,
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse("a=\\x").expect_err("escape").message,
            "invalid field selector: invalid escape sequence: \\x"
        );
        assert_eq!(
            FieldSelector::parse("\r").expect_err("a lone term").message,
            "invalid selector: '\r'; can't understand '\r'"
        );
    }
}
