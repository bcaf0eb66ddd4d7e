//! `piceli import live` against the test's cluster (the local one, or the real control plane of `PICELI_REAL_KUBECONFIG`): objects applied with the real kubectl are
//! read back as an `app!` module, and what the cluster made itself (ReplicaSets, Pods, the default
//! ServiceAccount, kube-root-ca.crt, …) is skipped.

use assert_cmd::Command;
use piceli_test_support::Cluster;
use std::io::Write;
use std::process::Stdio;

const APP: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n\
apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {MODE: prod}\n---\n\
apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 1\n  \
selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      \
containers:\n      - name: web\n        image: docker.io/library/nginx:1.27\n        ports: [{containerPort: 80}]\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n";

fn kubectl_apply(kubeconfig: &std::path::Path, text: &str) {
    let cache = tempfile::tempdir().expect("cache dir");
    let mut child = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["apply", "-f", "-"])
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kubectl ran");
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `kubectl ARGS` (its own cache, the given kubeconfig only): its stdout.
fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> String {
    let cache = tempfile::tempdir().expect("cache dir");
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn a_live_namespace_becomes_an_app_module() {
    let sim = Cluster::start();
    kubectl_apply(sim.kubeconfig_path(), APP);
    // Let the controllers make the ReplicaSet and Pod the import must skip.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args(["import", "live", "--kubeconfig"])
        .arg(sim.kubeconfig_path())
        .args([
            "--context",
            sim.context(),
            "--namespace",
            "shop",
            "--app",
            "shop",
        ])
        .env_remove("KUBECONFIG")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let source = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let report = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(source.contains("target live = kubeconfig("), "{source}");
    assert!(source.contains("namespace: \"shop\""), "{source}");
    assert!(source.contains("config_map settings {"), "{source}");
    assert!(source.contains("deployment web {"), "{source}");
    assert!(
        source.contains("image: unpinned(\"docker.io/library/nginx:1.27\")"),
        "{source}"
    );
    assert!(source.contains("service web -> web {"), "{source}");
    for server_set in [
        "uid",
        "resourceVersion",
        "managedFields",
        "creationTimestamp",
        "clusterIP:",
    ] {
        assert!(!source.contains(server_set), "`{server_set}` in:\n{source}");
    }
    assert!(
        !source.contains("kube-root-ca.crt") && !source.contains("ReplicaSet"),
        "{source}"
    );
    // The cluster filled in its defaults and a status; the import leaves out every value that equals the
    // 1.33 default, and the status.
    let live = kubectl(
        sim.kubeconfig_path(),
        &["get", "deployment", "web", "-n", "shop", "-o", "json"],
    );
    for defaulted in [
        "revisionHistoryLimit",
        "progressDeadlineSeconds",
        "terminationMessagePath",
        "dnsPolicy",
        "schedulerName",
        "status",
    ] {
        let field = format!("\"{defaulted}\"");
        assert!(
            live.contains(&field),
            "the cluster set `{defaulted}`:\n{live}"
        );
        assert!(
            !source.contains(&format!("{defaulted}:")),
            "`{defaulted}` in:\n{source}"
        );
    }
    for skipped in [
        "skipped ReplicaSet web-",
        "skipped Pod web-",
        "skipped ServiceAccount default",
        "skipped ConfigMap kube-root-ca.crt",
        "skipped Endpoints web",
        "skipped EndpointSlice web-",
    ] {
        assert!(
            report.contains(skipped),
            "`{skipped}` missing from:\n{report}"
        );
    }
}

const ROUTED: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: edge}\nspec:\n  ports: [{name: http, port: 80}]\n---\n\
apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: edge}\nspec:\n  \
parentRefs: [{name: public, namespace: infra}]\n  hostnames: [shop.example.com]\n  \
rules: [{backendRefs: [{name: api, port: 80}]}]\n";

#[test]
fn a_live_custom_resource_becomes_a_resource_item_with_the_clusters_crd() {
    let sim = Cluster::start();
    let crd = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/crds/gateway.networking.k8s.io_httproutes.yaml");
    kubectl_apply(
        sim.kubeconfig_path(),
        &std::fs::read_to_string(&crd).expect("the vendored CRD"),
    );
    kubectl(
        sim.kubeconfig_path(),
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=30s",
            "crd/httproutes.gateway.networking.k8s.io",
        ],
    );
    kubectl_apply(sim.kubeconfig_path(), ROUTED);
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join("edge");
    Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args(["import", "live", "--kubeconfig"])
        .arg(sim.kubeconfig_path())
        .args(["--context", sim.context(), "--namespace", "edge", "--crate"])
        .arg(&app)
        .env_remove("KUBECONFIG")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let source = std::fs::read_to_string(app.join("src/main.rs")).expect("main.rs");
    assert!(source.contains("    crds \"crds/\";\n"), "{source}");
    assert!(
        source.contains("resource gateway.networking.k8s.io/v1/HTTPRoute web {"),
        "{source}"
    );
    assert!(
        source.contains("hostnames: [\"shop.example.com\"],"),
        "{source}"
    );
    // The CRD the cluster serves, written into the crate and read as `app!` reads it.
    let written =
        std::fs::read_to_string(app.join("crds/httproutes.gateway.networking.k8s.io.yaml"))
            .expect("the cluster's CRD in crds/");
    let crds = piceli_import::crds::parse(&written, std::path::Path::new("crds/httproutes.yaml"))
        .expect("a CRD file");
    assert_eq!(crds.len(), 1);
    assert_eq!(crds[0].kind, "HTTPRoute");
    // The spec and the name only: no status, no server-set metadata.
    let json = written.split_once('\n').map(|(_, j)| j).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(json).expect("the file's JSON");
    assert!(v.get("status").is_none());
    assert_eq!(
        v["metadata"],
        serde_json::json!({"name": "httproutes.gateway.networking.k8s.io"})
    );
}
