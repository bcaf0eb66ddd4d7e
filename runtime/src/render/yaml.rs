//! A small block-style YAML emitter for `serde_json::Value`, written straight into a `String`.
//!
//! Style (the one kubectl prints): 2-space indentation, maps in insertion order, lists of maps in the compact
//! form with the dash at the parent key's indentation (`- name: x` / `  image: y`), empty maps and lists inline
//! (`{}`, `[]`), long lines never folded.
//!
//! Scalars are written so that any YAML 1.1 or 1.2 reader reads them back as the same JSON value:
//! - strings are plain (unquoted) only when they match a conservative allow-list and cannot be resolved to
//!   anything but a string (booleans such as `yes`/`on`, nulls, ints in every base, floats, sexagesimals,
//!   dates and timestamps all get quoted);
//! - multi-line strings without control characters or trailing spaces are literal blocks (`|`, `|-`, `|+`);
//! - everything else is double-quoted with JSON-compatible escapes (a JSON string literal is a valid YAML
//!   double-quoted scalar); control characters, U+2028/U+2029 and the BOM are escaped.

use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

use super::yaml_scalar::{is_plain_safe, literal_style, write_literal, write_quoted};

/// Implicit keys are limited to 1024 characters by YAML; longer ones (as written) use the explicit `? key` form.
/// Measured in bytes, which is never fewer than characters, with some margin.
const MAX_IMPLICIT_KEY: usize = 1000;

/// Append one YAML document (no `---`, ends with a newline).
pub(crate) fn write_document(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) if !map.is_empty() => write_map(out, map, 0, false),
        Value::Array(seq) if !seq.is_empty() => write_seq(out, seq, 0, false),
        _ => write_scalar_line(out, value, 0, true),
    }
}

/// Where a node is written, which decides how a nested collection starts.
#[derive(Clone, Copy)]
enum Place {
    /// After `key:`: maps go on the next lines, indented; lists on the next lines, not indented.
    Value,
    /// After `:` of an explicit (`? key`) entry: collections go on the next lines, indented.
    ExplicitValue,
    /// After `-`: collections start on the same line (`- name: x`, `- - x`).
    Item,
}

/// A block map at `indent`. With `inline_first`, the cursor already sits at column `indent` (after `- `).
fn write_map(out: &mut String, map: &Map<String, Value>, indent: usize, inline_first: bool) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        let start = out.len();
        write_key(out, key);
        if out.len() - start <= MAX_IMPLICIT_KEY {
            out.push(':');
            write_child(out, value, indent, Place::Value);
        } else {
            out.truncate(start);
            out.push_str("? ");
            write_key(out, key);
            out.push('\n');
            pad(out, indent);
            out.push(':');
            write_child(out, value, indent, Place::ExplicitValue);
        }
    }
}

/// A block list with its dashes at `indent`. With `inline_first`, the cursor already sits at column `indent`.
fn write_seq(out: &mut String, seq: &[Value], indent: usize, inline_first: bool) {
    for (i, item) in seq.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        out.push('-');
        write_child(out, item, indent, Place::Item);
    }
}

/// The node after `key:` / `-` / `:` (the cursor is right after that indicator); `indent` is the column of the
/// key or dash. Ends with a newline.
fn write_child(out: &mut String, value: &Value, indent: usize, place: Place) {
    match value {
        Value::Object(map) if !map.is_empty() => match place {
            Place::Item => {
                out.push(' ');
                write_map(out, map, indent + 2, true);
            }
            Place::Value | Place::ExplicitValue => {
                out.push('\n');
                write_map(out, map, indent + 2, false);
            }
        },
        Value::Array(seq) if !seq.is_empty() => match place {
            Place::Item => {
                out.push(' ');
                write_seq(out, seq, indent + 2, true);
            }
            Place::Value => {
                out.push('\n');
                write_seq(out, seq, indent, false);
            }
            Place::ExplicitValue => {
                out.push('\n');
                write_seq(out, seq, indent + 2, false);
            }
        },
        _ => {
            out.push(' ');
            write_scalar_line(out, value, indent, false);
        }
    }
}

/// A scalar (or empty collection) and its newline. Multi-line strings become literal blocks whose content is
/// indented to `indent + 2`; at the `root`, a block that would need an indentation indicator is quoted instead
/// (readers disagree on what the indicator is relative to there).
fn write_scalar_line(out: &mut String, value: &Value, indent: usize, root: bool) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => match literal_style(s) {
            Some(indicator) if !(root && indicator) => {
                return write_literal(out, s, indent + 2, indicator);
            }
            _ if is_plain_safe(s) => out.push_str(s),
            _ => write_quoted(out, s),
        },
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
    out.push('\n');
}

fn write_number(out: &mut String, n: &Number) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{n}");
}

/// A map key: plain when safe, else double-quoted (never a block scalar).
fn write_key(out: &mut String, key: &str) {
    if is_plain_safe(key) {
        out.push_str(key);
    } else {
        write_quoted(out, key);
    }
}

pub(super) fn pad(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(value: &Value) -> String {
        let mut out = String::new();
        write_document(&mut out, value);
        out
    }

    fn round_trip(value: &Value) {
        let yaml = doc(value);
        let back: Value = serde_saphyr::from_str(&yaml)
            .unwrap_or_else(|e| panic!("does not parse: {e}\n{yaml}\nfrom {value}"));
        assert_eq!(&back, value, "\n{yaml}");
        // Also as one document of a multi-document stream, as `to_yaml` writes it (serde-saphyr skips null
        // documents in streams).
        if value.is_null() {
            return;
        }
        let stream = format!("---\n{yaml}---\n{yaml}");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&stream)
            .unwrap_or_else(|e| panic!("stream does not parse: {e}\n{stream}"));
        assert_eq!(docs, [value.clone(), value.clone()], "\n{stream}");
    }

    /// Strings that YAML readers could take for something else, or that need quoting or a block.
    #[rustfmt::skip]
    const TRICKY: &[&str] = &[
        // YAML 1.1 and 1.2 booleans and nulls, in several cases; merge and value keys.
        "true", "True", "TRUE", "tRuE", "false", "False", "FALSE", "yes", "Yes", "YES", "yEs", "no", "No",
        "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", "null", "Null", "NULL", "nUlL",
        "~", "", "<<", "=",
        // Ints of every form.
        "0", "1", "-1", "+1", "42", "007", "0777", "0o17", "0O17", "0x1F", "0X1f", "0xdead_beef", "0b1010",
        "-0b1", "+0x1", "1_000", "1__0", "-1_000_000", "9223372036854775808", "-0", "+0", "0_",
        // Floats.
        "1.0", "1.", ".5", "-.5", "+.5", "1e5", "1E5", "1e+5", "1.5e-3", "-1.5E+3", "6.02e23", ".inf",
        ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN", "inf", "-inf", "Infinity", "nan", "NaN",
        "1.2.3", "1_000.5", "0.", "._", "+.", "1e", "e5", "E", "e", "-e",
        // Sexagesimal and timestamps.
        "1:30", "190:20:30", "190:20:30.15", "-1:30", "12:30:45", "2024-01-01", "2024-1-1",
        "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14", "2024-01-01T00:00:00Z",
        // Indicators and structure.
        "-", "- x", "-x", "--", "--port=8080", "---", "--- x", "...", "... x", ".", "..", "../x", "./run",
        "?", "? x", "?x", ":", ": x", ":x", "x:", "x: y", "x:y", "a :b", ",", ",x", "x,y", "[", "]", "[x]",
        "{", "}", "{x: y}", "#", "# x", "x #y", "x#y", "&a", "*a", "!tag", "!!str", "|", "|-", ">", ">-",
        "'", "''", "'x'", "\"", "\"x\"", "%YAML", "@x", "x@y", "`x`", "=x", "x=y", "~x", "x~", "+", "+x",
        "/", "/healthz", "x/", "_", "__x",
        // Spaces, tabs, quotes, backslashes.
        " ", "  ", " x", "x ", " x ", "a b", "a  b", "a\tb", "\t", "\tx", "x\t", "it's", "say \"hi\"",
        "back\\slash", "\\", "\\n", "\\u0041", "C:\\Windows",
        // Unicode and emoji.
        "héllo", "日本語", "ü", "emoji 🚀", "🚀", "\u{a0}", "x\u{a0}", "Ω≈ç√", "\u{10ffff}", "\u{e000}",
        // Control characters and odd code points.
        "\0", "a\0b", "\u{1}", "\u{7}", "\u{8}", "\u{b}", "\u{c}", "\u{1b}[0m", "\u{1f}", "\u{7f}",
        "\u{80}", "\u{85}", "x\u{85}y", "\u{9f}", "\u{2028}", "a\u{2029}b", "\u{feff}", "\u{feff}x",
        "\u{fffe}", "\u{ffff}", "\r", "a\rb", "a\r\nb", "\r\n",
        // Multi-line.
        "\n", "\n\n", "a\n", "a\nb", "a\nb\n", "a\nb\n\n", "a\n\n\n", "\na", "\n\na\n", "a\n\nb",
        " a\nb", "  a\n b\n", "\n a", "\n\n  a\n", "a\n b", "a\n  b\n", "a \nb", "a\nb ", "a\n \nb",
        "a\n\tb", "\ta\nb", "a\n#b", "# comment\nx: y\n", "---\n...\n", "- x\n- y\n", "? x\n: y",
        "line one\nline two\n", "a\u{85}\nb", "a\u{2028}\nb", "x\n\u{1b}", "a\r\nb\r\n", "é\n🚀\n",
        "server {\n  listen 80;\n  location / {\n    root /usr/share/nginx/html;\n  }\n}\n",
        "key: value\nlist:\n- a\n- b\n",
        // Ordinary values that should stay plain.
        "nginx", "web-0", "100m", "64Mi", "1Gi", "v1", "apps/v1", "app.kubernetes.io/name", "nginx.conf",
        "docker.io/library/nginx:1.27@sha256:abc", "IfNotPresent", "10s", "1h30m", "0.0.0.0/0", "a,b",
    ];

    fn tricky_strings() -> Vec<String> {
        let mut v: Vec<String> = TRICKY.iter().map(|s| s.to_string()).collect();
        v.push("k".repeat(1500)); // beyond the implicit key limit
        v.push("\u{1}".repeat(300)); // short, but long once escaped
        v.push(format!("{}\n{}", "x".repeat(2000), "y".repeat(10)));
        v
    }

    #[test]
    fn tricky_strings_round_trip_everywhere() {
        for s in tricky_strings() {
            let s = Value::String(s);
            let key = s.as_str().unwrap_or_default().to_string();
            for value in [
                s.clone(),
                json!({ "k": s }),
                json!({ key.clone(): "v" }),
                json!({ key.clone(): s }),
                json!({ key.clone(): { key.clone(): [s, { key.clone(): s }] } }),
                json!([s]),
                json!([s, [s], [[s]], { "k": s }]),
                json!({ "a": [{ "b": s, "c": [s, s], key.clone(): { "d": [s] } }], "z": s }),
                json!({ key.clone(): [s], "after": 1 }),
                json!({ key.clone(): [{ key.clone(): [s] }], "after": { key.clone(): {} } }),
                json!([[{ key.clone(): s }, s], { key.clone(): [] }]),
            ] {
                round_trip(&value);
            }
        }
    }

    #[test]
    fn non_strings_round_trip() {
        for value in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-1),
            json!(42),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1.5),
            json!(-0.25),
            json!(1.0),
            json!(1e300),
            json!(1e-7),
            json!(6.02e23),
            json!({}),
            json!([]),
            json!({ "a": null, "b": true, "c": 1, "d": 1.5, "e": {}, "f": [] }),
            json!([null, true, 1, 1.5, {}, []]),
        ] {
            round_trip(&value);
        }
    }

    #[test]
    fn nested_structures_round_trip() {
        for value in [
            json!([[]]),
            json!([{}]),
            json!([[], {}, [[]], [{}], { "a": [] }, { "a": {} }]),
            json!([[1, 2], [3, [4, [5, []]]], [[[]]]]),
            json!({ "a": [[1, 2], [{ "b": [3, { "c": [] }] }]] }),
            json!({ "a": { "b": { "c": { "d": {} } } }, "e": [{ "f": [{ "g": [[]] }] }] }),
            json!([{ "a": 1, "b": [{ "c": 2, "d": [] }, [{}]], "e": {} }, { "x": [[{ "y": "z" }]] }]),
            json!({ "list": [{ "name": "a", "args": ["--x", "-y", "z"], "env": [] }], "empty": {} }),
            json!({ "data": { "nginx.conf": "server {\n  listen 80;\n}\n", " x": " y\nz" } }),
            json!([" a\nb", "  a\n b\n", [" a\nb"], { "k": ["\n a"] }]),
        ] {
            round_trip(&value);
        }
    }

    /// Strings a YAML 1.1 reader (or a 1.2 one) would resolve to something else: serde-saphyr's round trip cannot
    /// tell for the 1.1 ones, so check that they are quoted.
    #[rustfmt::skip]
    const NOT_STRINGS: &[&str] = &[
        "yes", "No", "ON", "off", "y", "N", "~", "null", "", "1_000", "0777", "0x1F", "0b1", "1:30", "1.2.3",
        "2024-01-01", "2024-01-01T00:00:00Z", ".", "+.", "._", ".inf", "-.Inf", ".NaN", "1e5", "=", "<<",
        "007", "+1", "-0",
    ];

    #[test]
    fn yaml_1_1_specials_are_quoted() {
        for s in NOT_STRINGS {
            let yaml = doc(&json!({ "k": s }));
            assert!(yaml.starts_with("k: \""), "{s:?} must be quoted: {yaml}");
        }
        for s in [
            "100m",
            "64Mi",
            "v1.2.3",
            "e",
            "-e",
            "--port=80",
            "nginx:1.27",
            "/",
            "a b",
        ] {
            assert_eq!(
                doc(&json!({ "k": s })),
                format!("k: {s}\n"),
                "{s:?} should be plain"
            );
        }
    }

    #[test]
    fn scalar_styles() {
        let value = json!({
            "plain": "nginx:1.27",
            "int": "80",
            "esc": "a\u{1}\u{2028}\"\\\t",
            "strip": "a\nb",
            "clip": "a\nb\n",
            "keep": "a\n\n",
            "indented": "  a\nb\n",
            "odd key: x": "v",
            "example.com/owner": "me",
            "n": null,
            "b": false,
            "f": 1.5,
        });
        let expected = r#"plain: nginx:1.27
int: "80"
esc: "a\u0001\u2028\"\\\t"
strip: |-
  a
  b
clip: |
  a
  b
keep: |+
  a

indented: |2
    a
  b
"odd key: x": v
example.com/owner: me
"n": null
b: false
f: 1.5
"#;
        assert_eq!(doc(&value), expected);
    }

    #[test]
    fn kubectl_style_is_kept() {
        let value = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "labels": { "app.kubernetes.io/name": "hello" }, "name": "web" },
            "spec": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [{
                            "image": "docker.io/library/nginx:1.27@sha256:6784fb08",
                            "name": "web",
                            "ports": [{ "containerPort": 80, "name": "http" }],
                            "args": ["--port=80", "-v"],
                            "env": [{ "name": "INDEX", "value": "0" }],
                            "readinessProbe": { "httpGet": { "path": "/", "port": "http" } },
                            "resources": { "requests": { "cpu": "100m", "memory": "64Mi" } },
                            "volumeMounts": [],
                            "securityContext": {},
                        }],
                    },
                },
            },
        });
        let expected = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/name: hello
  name: web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - image: docker.io/library/nginx:1.27@sha256:6784fb08
        name: web
        ports:
        - containerPort: 80
          name: http
        args:
        - --port=80
        - -v
        env:
        - name: INDEX
          value: \"0\"
        readinessProbe:
          httpGet:
            path: /
            port: http
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
        volumeMounts: []
        securityContext: {}
";
        assert_eq!(doc(&value), expected);
        round_trip(&value);
    }

    #[test]
    fn long_keys_are_explicit() {
        let key = "k".repeat(1500);
        let yaml = doc(&json!({ key.clone(): [1] }));
        assert_eq!(yaml, format!("? {key}\n:\n  - 1\n"));
    }
}
