//! The workspace-hack's promise, checked: a package built for one member (`cargo build -p hello`, or
//! `-p hello -p piceli-bin` as `examples/hello/run-local.sh` builds) is built with the same features as in
//! `cargo build --workspace`, so the two builds share every compiled crate and do not rebuild each other.
//!
//! It asks `cargo tree` (no build; `--locked`, so it may only fetch the sources of locked crates that no
//! build on this machine needed yet, e.g. on a fresh `CARGO_HOME`, to read their manifests) for the
//! resolved features of every package each build compiles
//! — normal and build dependencies, as `cargo build` resolves them, host and target instances apart — and
//! fails naming each package compiled alone with a feature set the workspace build does not compile, with
//! the features to add to `workspace-hack/Cargo.toml`. (The workspace may compile more: another instance
//! for build scripts and proc-macros, or a package only other members use.)

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Package (`name version`) → the feature sets it is compiled with (one per host/target instance).
type Resolved = BTreeMap<String, BTreeSet<String>>;

/// Parses `cargo tree --prefix none -f '{p} [{f}]'` lines: `syn v2.0.1 [full,visit] (*)`,
/// `hello v0.1.0 (/path) []`, `serde_derive v1.0.0 (proc-macro) [default]`.
fn parse(tree: &str) -> Resolved {
    let mut resolved = Resolved::new();
    for line in tree.lines() {
        let line = line.trim().trim_end_matches("(*)").trim_end();
        let mut words = line.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let (Some(open), true) = (line.rfind('['), line.ends_with(']')) else {
            continue;
        };
        let features = line[open + 1..line.len() - 1].to_string();
        resolved
            .entry(format!("{name} {version}"))
            .or_default()
            .insert(features);
    }
    resolved
}

/// What `cargo build ARGS` would compile, and with which features.
fn resolve(args: &[&str]) -> Resolved {
    let out = Command::new(env!("CARGO"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["tree", "--locked", "-e", "normal,build"])
        .args(["--prefix", "none", "-f", "{p} [{f}]"])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// Every package `part` compiles with a feature set that `whole` does not compile it with.
fn divergent(part: &Resolved, whole: &Resolved) -> Vec<String> {
    part.iter()
        .filter_map(|(package, sets)| {
            let in_whole = whole.get(package).cloned().unwrap_or_default();
            (!sets.is_subset(&in_whole))
                .then(|| format!("{package}: {sets:?} alone, {in_whole:?} in the workspace"))
        })
        .collect()
}

fn assert_same_as_workspace(args: &[&str]) {
    let whole = resolve(&["--workspace"]);
    let part = resolve(args);
    let diverging = divergent(&part, &whole);
    assert!(
        diverging.is_empty(),
        "`cargo build {}` and `cargo build --workspace` compile these packages with different features, so \
         each rebuilds what the other built; turn the union on in workspace-hack/Cargo.toml:\n{}",
        args.join(" "),
        diverging.join("\n")
    );
}

#[test]
fn hello_is_built_as_in_the_workspace() {
    assert_same_as_workspace(&["-p", "hello"]);
}

#[test]
fn the_quick_start_build_is_built_as_in_the_workspace() {
    assert_same_as_workspace(&["-p", "hello", "-p", "piceli-bin"]);
}

#[test]
fn a_feature_turned_on_only_by_the_workspace_is_reported() {
    let part =
        parse("kube v5.0.0 [client]\nsyn v2.0.1 (proc-macro) [full]\nhello v0.1.0 (/w/hello) []\n");
    let whole =
        parse("kube v5.0.0 [client,derive]\nsyn v2.0.1 [full] (*)\nhello v0.1.0 (/w/hello) []\n");
    let diverging = divergent(&part, &whole);
    assert_eq!(diverging.len(), 1, "{diverging:?}");
    assert!(diverging[0].starts_with("kube v5.0.0:"), "{diverging:?}");
    // Host and target instances of one package are told apart: an instance only the workspace compiles
    // is no divergence, one compiled alone with other features is.
    let whole = parse("serde v1.0.0 [alloc,std]\nserde v1.0.0 [std]\n");
    let part = parse("serde v1.0.0 [alloc,std]\n");
    assert!(divergent(&part, &whole).is_empty());
    let part = parse("serde v1.0.0 [alloc,std]\nserde v1.0.0 [alloc]\n");
    assert_eq!(divergent(&part, &whole).len(), 1);
}
