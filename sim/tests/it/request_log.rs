//! The request log shows the admission webhook calls of each request (webhook, URL, HTTP status,
//! outcome, latency), as the background server writes it to DIR/sim.log with `PICELI_SIM_LOG=requests`:
//! a validating webhook that allows one ConfigMap and denies another, and one whose address refuses
//! connections under `failurePolicy: Ignore`, driven by the real kubectl.

use crate::webhook;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use webhook::WebhookServer;

fn sim_cmd(args: &[&str], log: bool) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_piceli-sim"));
    c.args(args);
    if log {
        c.env("PICELI_SIM_LOG", "requests");
    }
    c.output().expect("run piceli-sim")
}

/// The real kubectl against the server of `dir`, with its own cache; fails the test without kubectl.
fn kubectl(dir: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(dir.join("kubeconfig"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required for these tests and could not be run: {e}"))
}

#[test]
fn webhook_calls_are_lines_of_the_request_log() {
    let server = WebhookServer::start(
        &[],
        Duration::ZERO,
        Arc::new(|req: &Value| {
            let name = req["object"]["metadata"]["name"].as_str().unwrap_or("");
            if name == "bad" {
                json!({"allowed": false, "status": {"code": 403, "message": "bad is refused"}})
            } else {
                json!({"allowed": true})
            }
        }),
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let out = sim_cmd(&["start", "--dir", d], true);
    assert!(out.status.success(), "{out:?}");
    let cache = tempfile::tempdir().expect("cache");
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "logged"},
        "webhooks": [
            {"name": "names.piceli.dev", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "clientConfig": {"url": server.url("/validate"), "caBundle": server.ca_bundle()},
             "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                        "operations": ["CREATE"]}]},
            {"name": "gone.piceli.dev", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "failurePolicy": "Ignore",
             "clientConfig": {"url": format!("https://127.0.0.1:{closed}/validate"),
                              "caBundle": server.ca_bundle()},
             "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                        "operations": ["CREATE"]}]}
        ]
    });
    let file = dir.path().join("webhooks.json");
    std::fs::write(&file, config.to_string()).expect("write configuration");
    let applied = kubectl(
        dir.path(),
        cache.path(),
        &["apply", "-f", file.to_str().expect("utf-8 path")],
    );
    let ok = kubectl(dir.path(), cache.path(), &["create", "configmap", "good"]);
    let denied = kubectl(dir.path(), cache.path(), &["create", "configmap", "bad"]);
    let stopped = sim_cmd(&["stop", "--dir", d], false);
    assert!(applied.status.success(), "{applied:?}");
    assert!(ok.status.success(), "{ok:?}");
    assert!(!denied.status.success(), "{denied:?}");
    assert!(
        String::from_utf8_lossy(&denied.stderr).contains("bad is refused"),
        "{denied:?}"
    );
    assert!(stopped.status.success(), "{stopped:?}");

    let log = std::fs::read_to_string(dir.path().join("sim.log")).expect("sim.log");
    let calls: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("admission webhook"))
        .collect();
    assert_eq!(calls.len(), 4, "two webhooks, two creates: {log}");
    let url = server.url("/validate");
    let of = |webhook: &str, outcome: &str| -> Vec<&str> {
        calls
            .iter()
            .filter(|l| l.contains(&format!("webhook={webhook} ")))
            .filter(|l| l.contains(&format!("outcome={outcome} ")))
            .copied()
            .collect()
    };
    for (outcome, status) in [("allowed", "status=200"), ("denied", "status=200")] {
        let lines = of("names.piceli.dev", outcome);
        assert_eq!(lines.len(), 1, "{outcome}: {calls:?}");
        for part in [
            "piceli_sim::request",
            "kind=validating",
            "operation=CREATE",
            "resource=configmaps",
            &format!("url={url} "),
            status,
            "latency_us=",
        ] {
            assert!(lines[0].contains(part), "{part}: {}", lines[0]);
        }
    }
    let failed = of("gone.piceli.dev", "ignored");
    assert_eq!(failed.len(), 2, "{calls:?}");
    for line in failed {
        assert!(!line.contains("status="), "no response, no status: {line}");
        assert!(line.contains("connection refused"), "{line}");
    }
}
