//! Printing the generated module as Rust source: `piceli::app! { … }` and a `main`, formatted as a
//! person would write it (short maps and lists on one line, longer ones one entry per line).

use crate::dsl::{Dsl, Item, Module};

/// Widest line the printer puts a map or list on before breaking it up.
const WIDTH: usize = 100;

/// The source text of a module, ending in a newline.
pub fn module(m: &Module) -> String {
    let mut out = String::new();
    for h in &m.header {
        out.push_str(format!("//! {h}").trim_end());
        out.push('\n');
    }
    if !m.header.is_empty() {
        out.push('\n');
    }
    out.push_str("piceli::app! {\n");
    out.push_str(&format!("    app {};\n", name(&m.app)));
    out.push_str(&format!("    target {} = {};\n", m.target.0, m.target.1));
    for item in &m.items {
        out.push('\n');
        print_item(&mut out, item);
    }
    for t in &m.trailer {
        out.push('\n');
        for line in t.lines() {
            out.push_str(&format!("    // {line}\n"));
        }
    }
    out.push_str("}\n\nfn main() -> std::process::ExitCode {\n");
    out.push_str(&format!("    {}::main()\n}}\n", m.app.replace('-', "_")));
    out
}

fn print_item(out: &mut String, item: &Item) {
    for c in &item.comments {
        for line in c.lines() {
            out.push_str(format!("    // {line}").trim_end());
            out.push('\n');
        }
    }
    out.push_str(&format!("    {}", item.keyword));
    if !item.name.is_empty() {
        out.push_str(&format!(" {}", name(&item.name)));
    }
    if let Some(a) = &item.arrow {
        out.push_str(&format!(" -> {}", name(a)));
    }
    if item.body.is_empty() {
        out.push_str(";\n");
        return;
    }
    out.push_str(" {\n");
    for (k, v) in &item.body {
        out.push_str(&format!("        {}: {},\n", key(k), value(v, 2)));
    }
    out.push_str("    }\n");
}

/// A value at `depth` levels of indentation (4 spaces each).
pub fn value(v: &Dsl, depth: usize) -> String {
    let flat = flat(v);
    if flat.len() + depth * 4 <= WIDTH && !flat.contains('\n') {
        return flat;
    }
    let pad = "    ".repeat(depth + 1);
    let close = "    ".repeat(depth);
    match v {
        Dsl::Map(entries) if !entries.is_empty() => {
            let mut s = String::from("{\n");
            for (k, v) in entries {
                s.push_str(&format!("{pad}{}: {},\n", key(k), value(v, depth + 1)));
            }
            s.push_str(&close);
            s.push('}');
            s
        }
        Dsl::List(items) if !items.is_empty() => {
            let mut s = String::from("[\n");
            for i in items {
                s.push_str(&format!("{pad}{},\n", value(i, depth + 1)));
            }
            s.push_str(&close);
            s.push(']');
            s
        }
        _ => flat,
    }
}

/// A value on one line (strings with newlines print as raw strings, which span lines).
fn flat(v: &Dsl) -> String {
    match v {
        Dsl::Str(s) => string(s),
        Dsl::Int(i) => i.to_string(),
        Dsl::Float(f) => format!("{f:?}"),
        Dsl::Bool(b) => b.to_string(),
        Dsl::Name(n) => name(n),
        Dsl::Path(parts) => parts.iter().map(|p| name(p)).collect::<Vec<_>>().join("."),
        Dsl::Call(f, args, named) => {
            let mut parts: Vec<String> = args.iter().map(flat).collect();
            parts.extend(named.iter().map(|(k, v)| format!("{k}: {}", flat(v))));
            format!("{f}({})", parts.join(", "))
        }
        Dsl::Arrow(a, b) => format!("{} => {}", flat(a), flat(b)),
        Dsl::Map(entries) if entries.is_empty() => "{}".to_string(),
        Dsl::Map(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), flat(v)))
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Dsl::List(items) => {
            let parts: Vec<String> = items.iter().map(flat).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// A Rust string literal: a raw string for multi-line text (easier to read), an escaped one otherwise.
pub fn string(s: &str) -> String {
    if s.contains('\n') && !s.contains('\r') {
        let mut hashes = String::from("#");
        while s.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        return format!("r{hashes}\"{s}\"{hashes}");
    }
    format!("{s:?}")
}

/// A map key: bare when it is a plain identifier (API field names), quoted otherwise (`"app.kubernetes.io/name"`).
pub fn key(k: &str) -> String {
    let mut chars = k.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain { k.to_string() } else { string(k) }
}

/// A declared name: bare when the DSL's NAME grammar takes it (`web`, `redis-0`), quoted otherwise.
pub fn name(n: &str) -> String {
    let segment_ok = |s: &str, first: bool| {
        let mut chars = s.chars();
        match chars.next() {
            Some(c) if c.is_ascii_lowercase() || c == '_' => {
                chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            }
            Some(c) if c.is_ascii_digit() && !first => s.chars().all(|c| c.is_ascii_digit()),
            _ => false,
        }
    };
    let bare = n.split('-').enumerate().all(|(i, s)| segment_ok(s, i == 0));
    if bare { n.to_string() } else { string(n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keys_and_strings() {
        assert_eq!(name("redis-master"), "redis-master");
        assert_eq!(name("mysql-0"), "mysql-0");
        assert_eq!(name("web.v2"), "\"web.v2\"");
        assert_eq!(name("2web"), "\"2web\"");
        assert_eq!(key("matchLabels"), "matchLabels");
        assert_eq!(key("app.kubernetes.io/name"), "\"app.kubernetes.io/name\"");
        assert_eq!(string("a\"b"), "\"a\\\"b\"");
        assert_eq!(string("x\ny\n"), "r#\"x\ny\n\"#");
        assert_eq!(string("say \"#hi\n"), "r##\"say \"#hi\n\"##");
    }

    #[test]
    fn long_maps_break_into_lines() {
        let v = Dsl::Map(
            (0..8)
                .map(|i| (format!("key{i}"), Dsl::Str("a fairly long value".into())))
                .collect(),
        );
        let s = value(&v, 2);
        assert!(s.starts_with("{\n            key0: \"a fairly long value\",\n"));
        assert!(s.ends_with("\n        }"));
        assert_eq!(value(&Dsl::List(vec![Dsl::Int(1)]), 2), "[1]");
    }
}
