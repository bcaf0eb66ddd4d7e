//! The layering rule of the crate, checked: its top-level modules (`src/*`: `storage`, `registry`,
//! `apiserver`, `controllers`, …) import each other one way only, so the graph of `crate::X` paths
//! between them has no cycle, and the storage and the registry never import the parts that sit
//! above or beside them (the API server, controllers, kubelet, cert-manager, admission webhooks).
//! Run it with `cargo test -p piceli-sim --lib layers`; a failure names the file and line of each
//! offending path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the storage and the registry must never import: the layers above or beside them.
const ABOVE_REGISTRY: &[&str] = &[
    "apiserver",
    "controllers",
    "kubelet",
    "certmanager",
    "admission",
    "cluster",
    "hooks",
    "routes",
    "cli",
];

/// Where one top-level module names another: the file and line, for the failure message.
type Sites = BTreeMap<(String, String), Vec<String>>;

/// The top-level module a source file belongs to (`src/registry/kinds/pod/mod.rs` → `registry`,
/// `src/util.rs` → `util`); `None` for the crate root and the binaries.
fn top_module(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "bin")).then(|| name.to_string())
}

/// How deep a file's module is (`util.rs` 1, `registry/mod.rs` 1, `registry/kinds/pod/mod.rs` 3):
/// that many `super::` from it reach the crate root.
fn depth(rel: &Path) -> usize {
    let parts = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

/// The top-level modules a line names through `super::` paths that climb to the crate root from a
/// module `depth` deep (`super::super::apiserver` in `registry/delete.rs`).
fn named_through_super(line: &str, depth: usize) -> Vec<String> {
    let code = line.trim_start();
    if code.starts_with("//") || depth == 0 {
        return Vec::new();
    }
    let climb = "super::".repeat(depth);
    code.match_indices(&climb)
        .filter(|(i, _)| !code[..*i].ends_with("super::"))
        .filter_map(|(i, _)| first_ident(&code[i + climb.len()..]))
        .filter(|name| name != "super")
        .collect()
}

/// The top-level modules a line names through `crate::` paths (`crate::a::…`, `crate::{a, b::c}`).
/// Comments are skipped: only code imports.
fn named(line: &str) -> Vec<String> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let code = code.split(" //").next().unwrap_or(code);
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                out.extend(first_ident(item.trim()));
            }
        } else {
            out.extend(first_ident(rest));
        }
    }
    out
}

/// The leading lower-case identifier of a path (a module), not a type or value the root re-exports.
fn first_ident(path: &str) -> Option<String> {
    let ident: String = path
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (ident.starts_with(|c: char| c.is_ascii_lowercase())).then_some(ident)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names the crate root re-exports from a top-level module (`pub(crate) use apiserver::app;`
/// makes `crate::app` a path into `apiserver`).
fn root_aliases(src: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(path) = line
            .trim()
            .split_once("use ")
            .map(|(_, p)| p.trim_end_matches(';'))
        else {
            continue;
        };
        let Some((first, _)) = path.split_once("::") else {
            continue;
        };
        if let Some(last) = path.rsplit("::").next().and_then(first_ident) {
            out.insert(last, first.to_string());
        }
    }
    out
}

/// The arrows between top-level modules, each with where it is written.
fn arrows(src: &Path) -> Sites {
    let aliases = root_aliases(src);
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| top_module(f.strip_prefix(src).ok()?))
        .collect();
    let mut sites = Sites::new();
    for file in &files {
        let Ok(rel) = file.strip_prefix(src) else {
            continue;
        };
        let Some(from) = top_module(rel) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let levels = depth(rel);
        for (n, line) in text.lines().enumerate() {
            let mut names = named(line);
            names.extend(named_through_super(line, levels));
            for to in names {
                let to = aliases.get(&to).cloned().unwrap_or(to);
                if to != from && modules.contains(&to) {
                    sites.entry((from.clone(), to)).or_default().push(format!(
                        "src/{}:{}",
                        rel.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    sites
}

/// A cycle of the graph, if there is one (depth-first search).
fn cycle(sites: &Sites) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in sites.keys() {
        next.entry(from).or_default().push(to);
    }
    fn visit<'a>(
        node: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut found: Vec<String> = path[at..].iter().map(|n| n.to_string()).collect();
            found.push(node.to_string());
            return Some(found);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for to in next.get(node).into_iter().flatten() {
            if let Some(found) = visit(to, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    let starts: Vec<&str> = next.keys().copied().collect();
    for start in starts {
        if let Some(found) = visit(start, &next, &mut Vec::new(), &mut done) {
            return Some(found);
        }
    }
    None
}

#[test]
fn top_level_modules_import_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sites = arrows(&src);
    assert!(!sites.is_empty(), "no crate:: paths found under {src:?}");
    let mut wrong = Vec::new();
    for ((from, to), at) in &sites {
        let above = ABOVE_REGISTRY.contains(&to.as_str());
        if (matches!(from.as_str(), "storage" | "registry") && above)
            || (from == "storage" && to == "registry")
        {
            wrong.push(format!("{from} imports {to}: {}", at.join(", ")));
        }
    }
    if let Some(found) = cycle(&sites) {
        let mut lines = vec![format!("import cycle: {}", found.join(" -> "))];
        for pair in found.windows(2) {
            let at = &sites[&(pair[0].clone(), pair[1].clone())];
            lines.push(format!("  {} -> {}: {}", pair[0], pair[1], at.join(", ")));
        }
        wrong.push(lines.join("\n"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn paths_are_read_from_code_only() {
    assert_eq!(named("use crate::registry::Backend;"), ["registry"]);
    assert_eq!(
        named("use crate::{apiserver::x, storage, Sim};"),
        ["apiserver", "storage"]
    );
    assert!(named("//! see [`crate::apiserver`]").is_empty());
    assert_eq!(named("f(crate::time::now()); // crate::kubelet"), ["time"]);
    assert_eq!(depth(Path::new("registry/kinds/pod/mod.rs")), 3);
    assert_eq!(depth(Path::new("util.rs")), 1);
    assert_eq!(
        named_through_super("use super::super::apiserver::http;", 2),
        ["apiserver"]
    );
    assert!(named_through_super("use super::super::super::x;", 2).is_empty());
    assert!(named_through_super("use super::*;", 1).is_empty());
    let mut sites = Sites::new();
    sites.insert(("a".into(), "b".into()), vec!["src/a.rs:1".into()]);
    assert!(cycle(&sites).is_none());
    sites.insert(("b".into(), "a".into()), vec!["src/b.rs:2".into()]);
    assert_eq!(cycle(&sites).unwrap_or_default(), ["a", "b", "a"]);
}
