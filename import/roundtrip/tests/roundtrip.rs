//! The import round trip, as part of the workspace build: `src/main.rs` (app `corpus`),
//! `src/bin/extra.rs` (app `extra`) and `src/bin/crds.rs` (app `crds`: custom resources as `resource`
//! items over the workspace's vendored CRDs, tests/crds/) are what `piceli import` writes for the vendored corpus
//! (import/tests/corpus, each set with its SOURCE.md), and they compile with the workspace. This test
//! imports the corpus again and requires the committed sources to be exactly that output (regenerate with
//! `PICELI_UPDATE_IMPORT=1 cargo test -p import-roundtrip`), then runs each app's `render -o json` and
//! compares object for object, field for field with the input — modulo the labels and annotation Piceli
//! adds, the namespace it sets, the defaults it drops, and Secret values (rendered as redaction markers);
//! objects of removed API versions are compared in the version they were converted to.

use piceli_import::read::{Source, read_inputs};
use piceli_import::write::extra_files;
use piceli_import::{Imported, Options, import};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus(parts: &[&str]) -> Vec<String> {
    parts
        .iter()
        .map(|p| {
            crate_dir()
                .join("../tests/corpus")
                .join(p)
                .display()
                .to_string()
        })
        .collect()
}

/// The sets of the `corpus` app (target namespace `default`).
const CORPUS: &[&str] = &[
    "guestbook/guestbook-all-in-one.yaml",
    "guestbook",
    "podinfo",
    "stateful",
    "rbac-netpol",
];

/// The committed file must be `want`; with `PICELI_UPDATE_IMPORT=1` it is written instead.
fn current(path: &Path, want: &str, stale: &mut Vec<String>) {
    let have = std::fs::read_to_string(path).unwrap_or_default();
    if have == want {
        return;
    }
    if std::env::var_os("PICELI_UPDATE_IMPORT").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, want).expect("write");
    } else {
        stale.push(path.display().to_string());
    }
}

/// The files of one imported app: its source and its included objects.
fn files(out: &Imported, source: &Path, include: &str) -> Vec<(PathBuf, String)> {
    let mut files = vec![(source.to_path_buf(), out.source.clone())];
    files.extend(
        extra_files(&crate_dir(), out, include)
            .into_iter()
            .filter(|(p, _)| !p.ends_with(".env.example")),
    );
    files
}

#[test]
fn corpus_round_trips_through_the_generated_apps() {
    let corpus_in = read_inputs(&corpus(CORPUS), &mut std::io::empty()).expect("corpus reads");
    let corpus_out = import(
        corpus_in.clone(),
        &options("corpus", None, "k8s/corpus.json"),
    );
    let extra_in = read_inputs(&corpus(&["extra"]), &mut std::io::empty()).expect("extra reads");
    let extra_out = import(
        extra_in.clone(),
        &options("extra", Some("shop"), "k8s/extra.json"),
    );
    let crds_in = read_inputs(&corpus(&["crds"]), &mut std::io::empty()).expect("crds reads");
    let crds_out = import(crds_in.clone(), &crds_options());
    assert!(
        crds_out
            .source
            .contains("resource gateway.networking.k8s.io/v1/HTTPRoute web {"),
        "{}",
        crds_out.source
    );
    let mut stale = Vec::new();
    for (path, text) in files(
        &corpus_out,
        &crate_dir().join("src/main.rs"),
        "k8s/corpus.json",
    )
    .into_iter()
    .chain(files(
        &extra_out,
        &crate_dir().join("src/bin/extra.rs"),
        "k8s/extra.json",
    ))
    .chain(files(
        &crds_out,
        &crate_dir().join("src/bin/crds.rs"),
        "k8s/crds.json",
    )) {
        current(&path, &text, &mut stale);
    }
    assert!(
        stale.is_empty(),
        "the committed apps are not what `piceli import` writes now: {stale:?}; run \
         `PICELI_UPDATE_IMPORT=1 cargo test -p import-roundtrip` and review the diff"
    );
    let mut left_out = externals(&corpus_out);
    left_out.push("alexisGooD".into());
    compare(
        Path::new(env!("CARGO_BIN_EXE_roundtrip")),
        &corpus_in,
        "corpus",
        &left_out,
    );
    let left_out = externals(&extra_out);
    assert!(
        left_out.contains(&"shop-tls".to_string()),
        "the cert-manager Secret is external: {left_out:?}"
    );
    compare(
        Path::new(env!("CARGO_BIN_EXE_extra")),
        &extra_in,
        "extra",
        &left_out,
    );
    compare(
        Path::new(env!("CARGO_BIN_EXE_crds")),
        &crds_in,
        "crds",
        &externals(&crds_out),
    );
}

/// The `crds` app: the workspace's vendored CRDs, named from this crate as they lie (not copied).
fn crds_options() -> Options {
    Options {
        crds: piceli_import::crds::read(&[crate_dir().join("../../tests/crds")])
            .expect("the vendored CRDs read"),
        crds_path: Some("../../tests/crds/".into()),
        ..options("crds", Some("shop"), "k8s/crds.json")
    }
}

/// The names the module declares `external KIND NAME;`: someone else makes them, so they are not rendered.
fn externals(out: &Imported) -> Vec<String> {
    out.source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("external "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|n| n.trim_end_matches(';').trim_matches('"').to_string())
        .collect()
}

fn options(app: &str, ns: Option<&str>, include: &str) -> Options {
    Options {
        app: Some(app.into()),
        namespace: ns.map(String::from),
        target: None,
        include_path: include.into(),
        ..Options::default()
    }
}

/// Render the app and compare with the inputs (`left_out`: names the importer reports and leaves out).
fn compare(bin: &Path, inputs: &[Source], app: &str, left_out: &[String]) {
    let out = Command::new(bin)
        .args(["render", "-o", "json"])
        .output()
        .expect("the app binary runs");
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("render prints JSON");
    let rendered: Vec<Value> = list["items"].as_array().cloned().unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    let mut compared = 0;
    for s in inputs {
        let name = s.object["metadata"]["name"].as_str().unwrap_or_default();
        let kind = s.object["kind"].as_str().unwrap_or_default();
        if left_out.iter().any(|l| l == name) || !seen.insert((kind.to_string(), name.to_string()))
        {
            continue;
        }
        let Some(r) = rendered
            .iter()
            .find(|r| r["kind"] == kind && r["metadata"]["name"] == name)
        else {
            problems.push(format!("{kind} {name}: not rendered"));
            continue;
        };
        let want = normalize(s.object.clone());
        let have = normalize(r.clone());
        diff("", &want, &have, &mut problems, &format!("{kind} {name}"));
        compared += 1;
    }
    assert!(compared >= 5, "{app}: only {compared} objects compared");
    assert!(
        problems.is_empty(),
        "{app}: render differs from the input:\n{}",
        problems.join("\n")
    );
    let extra: Vec<String> = rendered
        .iter()
        .filter(|r| r["kind"] != "Namespace")
        .filter(|r| {
            !seen.contains(&(
                r["kind"].as_str().unwrap_or_default().to_string(),
                r["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ))
        })
        .map(|r| format!("{} {}", r["kind"], r["metadata"]["name"]))
        .collect();
    assert!(
        extra.is_empty(),
        "{app}: rendered objects not in the input: {extra:?}"
    );
}

/// Drop what Piceli adds (its labels, its annotation, the namespace), what the API defaults, and Secret
/// values; numbers-as-strings and the like stay as they are (a real difference).
fn normalize(mut o: Value) -> Value {
    piceli_import::clean::clean(&mut o);
    // An object of a removed API version is compared in the version it was imported to (the
    // conversions have unit tests of their own in piceli-import).
    piceli_import::convert::to_served(&mut o);
    if let Some(m) = o["metadata"].as_object_mut() {
        m.remove("namespace");
    }
    strip(&mut o);
    if o["kind"] == "Secret" {
        let mut keys: Vec<String> = Vec::new();
        for f in ["data", "stringData"] {
            if let Some(m) = o[f].as_object() {
                keys.extend(m.keys().cloned());
            }
        }
        keys.sort();
        keys.dedup();
        if let Some(obj) = o.as_object_mut() {
            obj.remove("stringData");
            obj.insert("data".into(), keys.into_iter().map(Value::from).collect());
        }
    }
    o
}

/// Remove Piceli's labels and annotation wherever labels and selectors live, then empty maps left behind.
fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if matches!(
                    k.as_str(),
                    "labels" | "matchLabels" | "selector" | "annotations"
                ) && let Value::Object(labels) = child
                {
                    labels.remove("app.kubernetes.io/component");
                    labels.remove("app.kubernetes.io/managed-by");
                    labels.remove("piceli.dev/target");
                    // Piceli's own (the app's name); one an input set is refused and reported (PCL0185).
                    labels.remove("app.kubernetes.io/name");
                }
                strip(child);
            }
            let empty: Vec<String> = m
                .iter()
                .filter(|(_, c)| c.as_object().is_some_and(Map::is_empty))
                .map(|(k, _)| k.clone())
                .collect();
            for k in empty {
                if k != "emptyDir" && k != "podSelector" {
                    m.remove(&k);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

fn diff(path: &str, want: &Value, have: &Value, out: &mut Vec<String>, what: &str) {
    match (want, have) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, av) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(bv) => diff(&p, av, bv, out, what),
                    None => out.push(format!("{what}: {p} missing (want {av})")),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{what}: {path}.{k} added ({})", b[k]));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), av, bv, out, what);
            }
        }
        _ if want == have => {}
        _ => out.push(format!("{what}: {path}: want {want}, have {have}")),
    }
}
