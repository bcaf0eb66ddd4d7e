//! The label selector grammar of k8s.io/apimachinery's `labels.Parse` (its lexer, parser and the
//! validation of keys and values), so a selector kube-apiserver refuses is refused here with the same
//! message: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`.

use crate::go_text::quote;

/// A requirement's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    NotEq,
    In,
    NotIn,
    Exists,
    NotExists,
    Gt,
    Lt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    Bang,
    DoubleEq,
    Eq,
    Gt,
    Ident,
    In,
    Lt,
    NotEq,
    NotIn,
    OpenPar,
    Error,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::Bang,
        "==" => Tok::DoubleEq,
        "=" => Tok::Eq,
        ">" => Tok::Gt,
        "in" => Tok::In,
        "<" => Tok::Lt,
        "!=" => Tok::NotEq,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The lexer's tokens of a selector, ending with [`Tok::End`].
fn scan(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && space(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        let start = pos;
        if special(b[pos]) {
            // The longest run of special symbols that is still a token.
            let mut last: Option<(Tok, usize)> = None;
            while pos < b.len() && special(b[pos]) {
                pos += 1;
                match keyword(&s[start..pos]) {
                    Some(t) => last = Some((t, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match last {
                Some((t, end)) => {
                    pos = end;
                    out.push((t, s[start..end].to_string()));
                }
                None => out.push((
                    Tok::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            while pos < b.len() && !special(b[pos]) && !space(b[pos]) {
                pos += 1;
            }
            let word = String::from_utf8_lossy(&b[start..pos]).into_owned();
            out.push((keyword(&word).unwrap_or(Tok::Ident), word));
        }
    }
}

/// The errors of `validation.IsQualifiedName`.
fn qualified_name_errors(key: &str) -> Vec<String> {
    const REGEX: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let parts: Vec<&str> = key.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_string());
                }
                if !crate::registry::validate::is_dns_subdomain(prefix) {
                    errs.push("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
                }
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".into());
    }
    if !qualified(name) {
        errs.push(format!("name part {REGEX}"));
    }
    errs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn qualified(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".into());
    }
    if !v.is_empty() && !qualified(v) {
        errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into());
    }
    errs
}

struct Parser {
    items: Vec<(Tok, String)>,
    at: usize,
}

impl Parser {
    /// The next token; in a value's place `in` and `notin` are identifiers.
    fn peek(&self, values: bool) -> (Tok, String) {
        let (t, l) = self.items[self.at.min(self.items.len() - 1)].clone();
        (Self::as_value(t, values), l)
    }

    fn next(&mut self, values: bool) -> (Tok, String) {
        let item = self.peek(values);
        self.at += 1;
        item
    }

    fn as_value(t: Tok, values: bool) -> Tok {
        if values && matches!(t, Tok::In | Tok::NotIn) {
            Tok::Ident
        } else {
            t
        }
    }

    fn requirement(&mut self) -> Result<(String, Op, Vec<String>), String> {
        let (mut tok, mut key) = self.next(true);
        let not = tok == Tok::Bang;
        if not {
            (tok, key) = self.next(true);
        }
        if tok != Tok::Ident {
            return Err(format!("found '{key}', expected: identifier"));
        }
        let errs = qualified_name_errors(&key);
        if !errs.is_empty() {
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                quote(&key),
                errs.join("; ")
            ));
        }
        if not || matches!(self.peek(true).0, Tok::End | Tok::Comma) {
            return Ok((key, if not { Op::NotExists } else { Op::Exists }, vec![]));
        }
        let (tok, lit) = self.next(false);
        let op = match tok {
            Tok::In => Op::In,
            Tok::Eq | Tok::DoubleEq => Op::Eq,
            Tok::Gt => Op::Gt,
            Tok::Lt => Op::Lt,
            Tok::NotIn => Op::NotIn,
            Tok::NotEq => Op::NotEq,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let values = match op {
            Op::In | Op::NotIn => self.set()?,
            _ => self.exact()?,
        };
        let mut errs = Vec::new();
        if matches!(op, Op::Gt | Op::Lt) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!("values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer", quote(v)));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let e = value_errors(v);
            if !e.is_empty() {
                errs.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    quote(v),
                    e.join("; ")
                ));
            }
        }
        match errs.len() {
            0 => Ok((key, op, values)),
            1 => Err(errs.remove(0)),
            _ => Err(format!("[{}]", errs.join(", "))),
        }
    }

    fn set(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.next(true);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.peek(true);
        let mut set = std::collections::BTreeSet::new();
        match tok {
            Tok::Ident | Tok::Comma => {
                loop {
                    let (t, l) = self.next(true);
                    match t {
                        Tok::Ident => {
                            set.insert(l);
                            match self.peek(true) {
                                (Tok::Comma, _) => continue,
                                (Tok::ClosedPar, _) => break,
                                (_, l2) => {
                                    return Err(format!("found '{l2}', expected: ',' or ')'"));
                                }
                            }
                        }
                        Tok::Comma => {
                            if set.is_empty() {
                                set.insert(String::new());
                            }
                            match self.peek(true).0 {
                                Tok::ClosedPar => {
                                    set.insert(String::new());
                                    break;
                                }
                                Tok::Comma => {
                                    self.next(true);
                                    set.insert(String::new());
                                }
                                _ => {}
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',', or identifier")),
                    }
                }
                if self.next(true).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
            }
            Tok::ClosedPar => {
                self.next(true);
                set.insert(String::new());
            }
            _ => return Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
        Ok(set.into_iter().collect())
    }

    fn exact(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.peek(true).0, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.next(true) {
            (Tok::Ident, l) => Ok(vec![l]),
            (_, l) => Err(format!("found '{l}', expected: identifier")),
        }
    }
}

/// Parses a label selector into its requirements, or `labels.Parse`'s error message.
pub fn parse(s: &str) -> Result<Vec<(String, Op, Vec<String>)>, String> {
    let mut p = Parser {
        items: scan(s),
        at: 0,
    };
    let mut out = Vec::new();
    loop {
        let (tok, lit) = p.peek(true);
        match tok {
            Tok::Ident | Tok::Bang => {
                let r = p
                    .requirement()
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                out.push(r);
                match p.next(true) {
                    (Tok::End, _) => return Ok(out),
                    (Tok::Comma, _) => {
                        let (t2, l2) = p.peek(true);
                        if t2 != Tok::Ident && t2 != Tok::Bang {
                            return Err(format!("found '{l2}', expected: identifier after ','"));
                        }
                    }
                    (_, l) => {
                        return Err(format!("found '{l}', expected: ',' or 'end of string'"));
                    }
                }
            }
            Tok::End => return Ok(out),
            _ => {
                return Err(format!(
                    "found '{lit}', expected: !, identifier, or 'end of string'"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_kube_accepts() {
        assert_eq!(
            parse("a=b, c!=d,e in (x, y),!f,g,h notin (z),n>3").expect("parses"),
            vec![
                ("a".into(), Op::Eq, vec!["b".into()]),
                ("c".into(), Op::NotEq, vec!["d".into()]),
                ("e".into(), Op::In, vec!["x".into(), "y".into()]),
                ("f".into(), Op::NotExists, vec![]),
                ("g".into(), Op::Exists, vec![]),
                ("h".into(), Op::NotIn, vec!["z".into()]),
                ("n".into(), Op::Gt, vec!["3".into()]),
            ]
        );
        assert_eq!(parse("").expect("empty"), vec![]);
        assert_eq!(
            parse("example.com/a==").expect("empty value")[0].2,
            vec![String::new()]
        );
    }

    #[test]
    fn selectors_kube_refuses_with_its_messages() {
        let e = parse("__main__").expect_err("bad key");
        assert!(e.starts_with("unable to parse requirement: <nil>: Invalid value: \"__main__\": name part must consist of"), "{e}");
        let e = parse("\u{3}x/iU").expect_err("bad prefix");
        assert!(e.starts_with("unable to parse requirement: <nil>: Invalid value: \"\\x03x/iU\": prefix part a lowercase RFC 1123"), "{e}");
        assert_eq!(
            parse("=a").expect_err("op first"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            parse("a=b,").expect_err("trailing comma"),
            "found '', expected: identifier after ','"
        );
        assert_eq!(
            parse("a b").expect_err("two words"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        let e = parse("a=b c").expect_err("junk");
        assert_eq!(e, "found 'c', expected: ',' or 'end of string'");
        let e = parse("a=-x").expect_err("bad value");
        assert!(e.starts_with("unable to parse requirement: values[0][a]: Invalid value: \"-x\": a valid label must be"), "{e}");
        assert!(
            parse("a>x")
                .expect_err("gt")
                .contains("the value must be an integer")
        );
        assert_eq!(
            parse("a in x").expect_err("no paren"),
            "unable to parse requirement: found 'x' expected: '('"
        );
    }
}
