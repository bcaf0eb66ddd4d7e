//! The crate `piceli import yaml - --crate DIR` writes builds as a user builds it (`cargo build --release` in
//! DIR, depending on this checkout by path, offline against the crates already in ~/.cargo), and its `render`
//! gives back the imported objects field for field (modulo Piceli's labels, the namespace it sets, the API
//! defaults the importer drops, and Secret values).
//!
//! Cost: the generated crate is its own workspace, so a cold build compiles piceli and its dependencies. It
//! builds in the target directory the tests' app crates share (`piceli_test_support::apps`: the release
//! profile at `opt-level = 0` with the dev checks, not the generated dev profile, which cargo still parses),
//! so in a test run only the first of the external project, this crate and the self-built operator compiles
//! the dependency tree (docs/benchmarks.md). The crate lives at a fixed path under cargo's
//! `CARGO_TARGET_TMPDIR` (target/tmp/import-crate/), rewritten each run, so nothing accumulates.

use piceli_test_support::apps;
use serde_json::{Map, Value};
use std::path::Path;
use std::process::Command;

/// A small but typical set: a Deployment with env from a ConfigMap and a Secret, probes, resources and a
/// volume, the Service that selects it, a NetworkPolicy, and an HTTPRoute and a ServiceMonitor of it
/// (`resource` items over the vendored CRDs given with `--crds`, copied into the crate's `crds/`).
const INPUT: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {MODE: prod}
---
apiVersion: v1
kind: Secret
metadata: {name: db}
type: Opaque
data: {password: c2VjcmV0}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d
          ports: [{name: http, containerPort: 80}]
          env:
            - {name: MODE, valueFrom: {configMapKeyRef: {name: settings, key: MODE}}}
            - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
          resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128Mi}}
          readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 5}
          volumeMounts: [{name: conf, mountPath: /etc/web, readOnly: true}]
      volumes: [{name: conf, configMap: {name: settings}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-ingress}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
  ingress: [{from: [{podSelector: {matchLabels: {role: frontend}}}], ports: [{port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, labels: {tier: edge}}
spec:
  parentRefs: [{name: public, namespace: infra}]
  hostnames: [shop.example.com]
  rules: [{matches: [{path: {type: PathPrefix, value: /}}], backendRefs: [{name: web, port: 80}]}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: shop}}
  endpoints: [{port: http, interval: 30s}]
"#;

#[test]
fn an_imported_crate_builds_and_renders_its_input() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let app = tmp.join("import-crate").join("shop");
    if app.exists() {
        std::fs::remove_dir_all(&app).expect("remove the last run's crate");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args(["import", "yaml", "-", "--crate"])
        .arg(&app)
        .arg("--crds")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/crds"))
        .arg("--piceli-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(INPUT.as_bytes())?;
            child.wait_with_output()
        })
        .expect("piceli import runs");
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let source = std::fs::read_to_string(app.join("src/main.rs")).expect("src/main.rs");
    for item in [
        "crds \"crds/\";",
        "resource gateway.networking.k8s.io/v1/HTTPRoute web {",
        "resource monitoring.coreos.com/v1/ServiceMonitor web {",
    ] {
        assert!(source.contains(item), "`{item}` missing:\n{source}");
    }
    assert!(
        app.join("crds/gateway.networking.k8s.io_httproutes.yaml")
            .is_file()
    );
    // The workspace's lock file, so the build resolves offline to the versions already downloaded.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
        app.join("Cargo.lock"),
    )
    .expect("copy Cargo.lock");

    let build = apps::cargo_build(&app, tmp, &["--offline", "--quiet"])
        .output()
        .expect("cargo runs");
    assert!(
        build.status.success(),
        "the imported crate does not build:\n{}\n--- src/main.rs ---\n{}",
        String::from_utf8_lossy(&build.stderr),
        std::fs::read_to_string(app.join("src/main.rs")).unwrap_or_default()
    );

    let render = Command::new(apps::binary(tmp, "shop"))
        .args(["render", "-o", "json"])
        .current_dir(&app)
        .output()
        .expect("the app binary runs");
    assert!(
        render.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&render.stderr)
    );
    let rendered: Value = serde_json::from_slice(&render.stdout).expect("render prints JSON");
    let rendered = rendered["items"].as_array().cloned().unwrap_or_default();

    let mut problems = Vec::new();
    let mut compared = 0;
    let inputs =
        piceli_import::read::parse_text(INPUT, "<input>", Some(false)).expect("the input parses");
    for source in inputs {
        let want = source.object;
        let (kind, name) = (&want["kind"], &want["metadata"]["name"]);
        let Some(have) = rendered
            .iter()
            .find(|r| &r["kind"] == kind && &r["metadata"]["name"] == name)
        else {
            problems.push(format!("{kind} {name}: not rendered"));
            continue;
        };
        let (want, have) = (normalize(want.clone()), normalize(have.clone()));
        if want != have {
            problems.push(format!("{kind} {name}:\n want {want}\n have {have}"));
        }
        compared += 1;
    }
    assert_eq!(compared, 7, "{problems:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Drop what Piceli adds (its labels, the namespace), what the API defaults, and Secret values.
fn normalize(mut o: Value) -> Value {
    piceli_import::clean::clean(&mut o);
    if let Some(m) = o["metadata"].as_object_mut() {
        m.remove("namespace");
    }
    strip(&mut o);
    // Secret values are redaction markers in `render` (under `stringData`): compare the keys.
    if o["kind"] == "Secret"
        && let Some(obj) = o.as_object_mut()
    {
        let mut keys: Vec<String> = ["data", "stringData"]
            .iter()
            .filter_map(|f| obj.get(*f).and_then(Value::as_object))
            .flat_map(|m| m.keys().cloned())
            .collect();
        keys.sort();
        keys.dedup();
        obj.remove("stringData");
        obj.insert("data".into(), keys.into_iter().map(Value::from).collect());
    }
    o
}

/// Remove Piceli's labels wherever labels and selectors live, then the empty maps left behind.
fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if matches!(
                    k.as_str(),
                    "labels" | "matchLabels" | "selector" | "annotations"
                ) && let Value::Object(labels) = child
                {
                    for piceli in [
                        "app.kubernetes.io/name",
                        "app.kubernetes.io/component",
                        "app.kubernetes.io/managed-by",
                        "piceli.dev/target",
                    ] {
                        labels.remove(piceli);
                    }
                }
                strip(child);
            }
            m.retain(|k, c| !c.as_object().is_some_and(Map::is_empty) || k == "podSelector");
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}
