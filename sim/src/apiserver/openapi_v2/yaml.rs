//! The YAML text gnostic puts in an `Any` (vendor extensions, `enum` values): block style with
//! yaml.v3's indentation (four spaces per level, two inside a `- ` item), keys in document order.
//!
//! Scalars are plain where yaml.v3 writes them plain and on one line; any other string is
//! double-quoted with JSON escapes (yaml.v3 would sometimes single-quote, fold long lines or use
//! a `|-` block instead: the text differs, the value parsed from it does not).

use serde_json::{Map, Value};

/// yaml.v3's preferred line width: plain scalars longer than this are folded by yaml.v3, so they
/// are quoted here.
const WIDTH: usize = 80;

/// The YAML document for one value, ending in a newline (as `yaml.Marshal` writes it).
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping(m, 0, false, &mut out),
        Value::Array(a) if !a.is_empty() => sequence(a, 0, false, &mut out),
        other => {
            out.push_str(&inline(other, 0));
            out.push('\n');
        }
    }
    out
}

/// The indentation of a block nested under a mapping key at `indent` (yaml.v3 aligns every level
/// to a multiple of four).
fn deeper(indent: usize) -> usize {
    4 * ((indent + 4) / 4)
}

/// A scalar or an empty collection, written on the current line starting at `column`.
fn inline(v: &Value, column: usize) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s, column),
        Value::Array(_) => "[]".to_string(),
        Value::Object(_) => "{}".to_string(),
    }
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// A block mapping whose entries start at column `indent`; `continued` when the first entry goes
/// on the current line (after a `- `).
fn mapping(m: &Map<String, Value>, indent: usize, continued: bool, out: &mut String) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !continued {
            out.push_str(&" ".repeat(indent));
        }
        let key = string(k, indent);
        out.push_str(&key);
        out.push(':');
        match v {
            Value::Object(child) if !child.is_empty() => {
                out.push('\n');
                mapping(child, deeper(indent), false, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                sequence(items, deeper(indent), false, out);
            }
            scalar => {
                out.push(' ');
                out.push_str(&inline(scalar, indent + key.len() + 2));
                out.push('\n');
            }
        }
    }
}

/// A block sequence whose `- ` indicators are at column `indent`.
fn sequence(items: &[Value], indent: usize, continued: bool, out: &mut String) {
    for (i, v) in items.iter().enumerate() {
        if i > 0 || !continued {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str("- ");
        match v {
            Value::Object(m) if is_block(v) => mapping(m, indent + 2, true, out),
            Value::Array(a) if is_block(v) => sequence(a, indent + 2, true, out),
            scalar => {
                out.push_str(&inline(scalar, indent + 2));
                out.push('\n');
            }
        }
    }
}

/// A string scalar: plain when yaml.v3 would write it plain on one line, else double-quoted.
fn string(s: &str, column: usize) -> String {
    if plain_ok(s) && column + s.len() <= WIDTH {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
    }
}

/// Whether a plain scalar reads back as this same string: not empty, not a word or number YAML
/// resolves to another type, no indicator where YAML would read one, printable ASCII only, no
/// leading or trailing space.
fn plain_ok(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if resolves_to_other_type(s) || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if first == b' ' || last == b' ' || last == b':' {
        return false;
    }
    let followed_by_space = |i: usize| bytes.get(i + 1).is_none_or(|b| *b == b' ');
    if b"#,[]{}&*!|>'\"%@`".contains(&first)
        || (matches!(first, b'?' | b':' | b'-') && followed_by_space(0))
    {
        return false;
    }
    for (i, &b) in bytes.iter().enumerate() {
        if !(0x20..0x7f).contains(&b) {
            return false;
        }
        if (b == b':' && followed_by_space(i)) || (b == b'#' && i > 0 && bytes[i - 1] == b' ') {
            return false;
        }
    }
    true
}

/// Whether YAML would read the plain scalar as a null, bool or number (so yaml.v3 quotes it).
fn resolves_to_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", ".inf",
        ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN",
        ".NAN", "<<",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let Some(first) = s.chars().next() else {
        return true;
    };
    // Anything that starts like a number and could be one (ints in any base, floats, with
    // underscores) is quoted, as yaml.v3 quotes what it resolves to a number.
    (first.is_ascii_digit() || matches!(first, '+' | '-' | '.'))
        && s.trim_start_matches(['+', '-']).chars().all(|c| {
            c.is_ascii_hexdigit() || matches!(c, '.' | '_' | 'x' | 'o' | 'e' | 'E' | '+' | '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_what_gnostic_writes_for_kubernetes_extensions() {
        let gvk = json!([{"group": "apps", "kind": "Deployment", "version": "v1"}]);
        assert_eq!(
            to_yaml(&gvk),
            "- group: apps\n  kind: Deployment\n  version: v1\n"
        );
        let core = json!({"group": "", "kind": "Pod", "version": "v1"});
        assert_eq!(to_yaml(&core), "group: \"\"\nkind: Pod\nversion: v1\n");
        assert_eq!(to_yaml(&json!("merge")), "merge\n");
        assert_eq!(to_yaml(&json!(true)), "true\n");
        assert_eq!(
            to_yaml(&json!(["containerPort", "protocol"])),
            "- containerPort\n- protocol\n"
        );
        let unions = json!([{"discriminator": "type", "fields-to-discriminateBy": {"exempt": "Exempt", "limited": "Limited"}}]);
        assert_eq!(
            to_yaml(&unions),
            "- discriminator: type\n  fields-to-discriminateBy:\n    exempt: Exempt\n    limited: Limited\n"
        );
    }

    #[test]
    fn nests_and_quotes_as_yaml_v3() {
        let v = json!({"k": ["x", "y"], "m": {"z": [{"q": 1}]}});
        assert_eq!(
            to_yaml(&v),
            "k:\n    - x\n    - y\nm:\n    z:\n        - q: 1\n"
        );
        assert_eq!(to_yaml(&json!([["a", "b"], "c"])), "- - a\n  - b\n- c\n");
        assert_eq!(to_yaml(&json!("123")), "\"123\"\n");
        assert_eq!(to_yaml(&json!("")), "\"\"\n");
        assert_eq!(to_yaml(&json!("a: b")), "\"a: b\"\n");
        assert_eq!(to_yaml(&json!("*")), "\"*\"\n");
        assert_eq!(to_yaml(&json!("line1\nline2")), "\"line1\\nline2\"\n");
        assert_eq!(
            to_yaml(&json!("has(self.x) && self.y > 0")),
            "has(self.x) && self.y > 0\n"
        );
        assert_eq!(to_yaml(&json!(null)), "null\n");
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(to_yaml(&json!({"a": []})), "a: []\n");
    }
}
