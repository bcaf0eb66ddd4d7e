//! Response bodies in YAML (`Accept: application/yaml`), written as kube-apiserver writes them:
//! sigs.k8s.io/yaml turns the JSON into go-yaml v2's block style — keys sorted, two-space indentation,
//! a sequence's `- ` at its key's indentation, `{}` and `[]` for empty collections, multi-line strings
//! as literal blocks, and a string double-quoted where YAML 1.1 would read it as something else
//! (`"1554"`, `"yes"`, a timestamp), single-quoted where its characters do not allow a plain scalar.
//! go-yaml also folds plain strings longer than 80 columns; these are kept on one line (the same value
//! once read).

use bytes::Bytes;
use http::{HeaderValue, header};
use serde_json::Value;

use crate::apiserver::http::{Resp, SimBody};

/// Whether an `Accept` header asks for YAML before JSON or protobuf (the first media range the server
/// serves wins, as in kube-apiserver's negotiation of equal qualities).
pub fn wanted(accept: &str) -> bool {
    for part in accept.split(',') {
        match part.split(';').next().unwrap_or("").trim() {
            "application/yaml" => return true,
            "application/json"
            | "application/vnd.kubernetes.protobuf"
            | "application/*"
            | "*/*" => {
                return false;
            }
            _ => {}
        }
    }
    false
}

/// A JSON response rewritten as YAML (`application/yaml`); any other response as it is.
pub fn respond_in_yaml(resp: Resp) -> Resp {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if !is_json {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let SimBody::Full(Some(bytes)) = body else {
        return http::Response::from_parts(parts, body);
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return http::Response::from_parts(parts, SimBody::Full(Some(bytes)));
    };
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/yaml"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    http::Response::from_parts(parts, SimBody::Full(Some(Bytes::from(to_yaml(&value)))))
}

/// The YAML text of one JSON value, ending with a newline.
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping_entries(v, 0, false, &mut out),
        Value::Array(a) if !a.is_empty() => sequence(a, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn sorted(v: &Value) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = v.as_object().into_iter().flatten().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// A block mapping at `indent` (its first line already indented when `first_inline`).
fn mapping_entries(v: &Value, indent: usize, first_inline: bool, out: &mut String) {
    for (i, (k, child)) in sorted(v).into_iter().enumerate() {
        if i > 0 || !first_inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&string(k));
        out.push(':');
        value_after_key(child, indent, out);
    }
}

fn value_after_key(child: &Value, indent: usize, out: &mut String) {
    match child {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            mapping_entries(child, indent + 2, false, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            sequence(a, indent, out);
        }
        Value::String(s) if s.contains('\n') => {
            out.push(' ');
            literal(s, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A block sequence whose `- ` indicators are at `indent`.
fn sequence(items: &[Value], indent: usize, out: &mut String) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => mapping_entries(item, indent + 2, true, out),
            Value::Array(a) if !a.is_empty() => {
                // `- - a`: the inner sequence starts on the dash's line.
                let mut inner = String::new();
                sequence(a, indent + 2, &mut inner);
                out.push_str(inner.trim_start());
            }
            Value::String(s) if s.contains('\n') => literal(s, indent + 2, out),
            other => {
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

/// A literal block (`|`, `|-` without a final newline, `|+` with more than one), its lines at `indent`.
fn literal(s: &str, indent: usize, out: &mut String) {
    let chomp = if !s.ends_with('\n') {
        "-"
    } else if s.ends_with("\n\n") {
        "+"
    } else {
        ""
    };
    let lead = if s.starts_with(' ') { "2" } else { "" };
    out.push('|');
    out.push_str(lead);
    out.push_str(chomp);
    out.push('\n');
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&" ".repeat(indent));
            out.push_str(line);
        }
        out.push('\n');
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A string scalar: plain when YAML 1.1 reads it back as the same string, else quoted.
fn string(s: &str) -> String {
    if resolves_to_other_type(s) {
        return double_quoted(s);
    }
    if plain_ok(s) {
        return s.to_string();
    }
    if s.chars().all(|c| !c.is_control()) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

fn double_quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Whether a plain `s` would be read as null, a boolean, a number or a timestamp (YAML 1.1, as
/// go-yaml v2 resolves plain scalars).
fn resolves_to_other_type(s: &str) -> bool {
    if s.is_empty() || looks_like_timestamp(s) {
        return true;
    }
    match piceli_core::include::yaml::from_str(&format!("k: {s}")) {
        Ok(Value::Object(m)) => m.get("k") != Some(&Value::String(s.to_string())),
        // Not a plain scalar at all: quoting decides below.
        _ => false,
    }
}

/// `2006-1-2`, optionally followed by a time: go-yaml v2 resolves these as timestamps.
fn looks_like_timestamp(s: &str) -> bool {
    let mut parts = s.splitn(3, '-');
    let year = parts.next().unwrap_or_default();
    let month = parts.next().unwrap_or_default();
    let rest = parts.next().unwrap_or_default();
    let day: String = rest.chars().take_while(char::is_ascii_digit).collect();
    year.len() == 4
        && year.chars().all(|c| c.is_ascii_digit())
        && (1..=2).contains(&month.len())
        && month.chars().all(|c| c.is_ascii_digit())
        && (1..=2).contains(&day.len())
}

/// Whether libyaml's emitter allows `s` as a plain scalar.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // `-`, `?` and `:` start a plain scalar only when not followed by a space (and not alone).
        let second = s.chars().nth(1);
        if !(matches!(first, '-' | '?' | ':') && second.is_some_and(|c| c != ' ')) {
            return false;
        }
    }
    !(s.starts_with("---")
        || s.starts_with("...")
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.contains('\t')
        || s.chars().any(|c| c.is_control()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_go_yaml_v2_block_style_with_sorted_keys() {
        let cm = json!({
            "kind": "ConfigMap", "apiVersion": "v1", "data": {"k": "v", "n": "1554", "b": "yes", "e": ""},
            "metadata": {"name": "h1", "creationTimestamp": "2026-12-06T07:01:13Z",
                "labels": {"set": "h"}, "annotations": {},
                "managedFields": [{"manager": "unknown", "fieldsV1": {"f:data": {".": {}, "f:k": {}}}}]},
        });
        assert_eq!(
            to_yaml(&cm),
            "apiVersion: v1\ndata:\n  b: \"yes\"\n  e: \"\"\n  k: v\n  \"n\": \"1554\"\nkind: ConfigMap\n\
             metadata:\n  annotations: {}\n  creationTimestamp: \"2026-12-06T07:01:13Z\"\n  labels:\n    set: h\n\
             \x20 managedFields:\n  - fieldsV1:\n      f:data:\n        .: {}\n        f:k: {}\n    manager: unknown\n\
             \x20 name: h1\n"
        );
    }

    #[test]
    fn quotes_what_would_read_back_otherwise_and_keeps_multiline_text() {
        assert_eq!(
            to_yaml(
                &json!({"a": "x: y", "b": "- z", "c": "it's", "d": "line\nnext\n", "e": [[1, 2]]})
            ),
            "a: 'x: y'\nb: '- z'\nc: it's\nd: |\n  line\n  next\ne:\n- - 1\n  - 2\n"
        );
        let v = json!({"x": "a: b", "y": "on", "z": ["~", "0744", "a\nb"]});
        let text = to_yaml(&v);
        assert_eq!(
            piceli_core::include::yaml::from_str(&text).expect("reads"),
            v,
            "{text}"
        );
    }
}
