//! `piceli sim route` with the built-in cert-manager, through the real kubectl: an operator's
//! cert-manager objects and webhook configuration applied to the local cluster, its webhook served
//! by a process on this machine with the issued Secret's key and certificate, the Service port
//! routed to it — a `:latest` Deployment is then denied with the handler's message, with no pod
//! behind the Service; without the route, the webhook has no endpoints.

use crate::common;
use crate::webhook;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use common::{Kubectl, eventually, json_of};
use piceli_sim::{Sim, SimConfig};
use serde_json::{Value, json};
use webhook::WebhookServer;

const CHAIN: &str = include_str!("../data/cert-manager-chain.yaml");

const OPERATOR: &str = r#"apiVersion: v1
kind: Service
metadata: {name: guard, namespace: guard-system}
spec:
  selector: {app: guard}
  ports: [{name: https, port: 443, targetPort: 8443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: guard
  annotations: {cert-manager.io/inject-ca-from: guard-system/guard-tls}
webhooks:
- name: no-latest-tag.guard.piceli.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [guard-system, kube-system]}]
  clientConfig:
    service: {namespace: guard-system, name: guard, path: /validate/no-latest-tag, port: 443}
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
"#;

fn sim_cmd(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
        .args(args)
        .output()
        .expect("run piceli-sim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn pem(k: &Kubectl, key: &str) -> String {
    let s = json_of(&k.ok(&[
        "get",
        "secret",
        "guard-tls",
        "-n",
        "guard-system",
        "-o",
        "json",
    ]));
    let text = base64::engine::general_purpose::STANDARD
        .decode(s["data"][key].as_str().expect("key"))
        .expect("base64");
    String::from_utf8(text).expect("PEM")
}

/// Denies Deployments whose images use `:latest`.
fn no_latest(request: &Value) -> Value {
    let latest = request
        .pointer("/object/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["image"].as_str().is_some_and(|i| i.ends_with(":latest")));
    if latest {
        json!({"allowed": false, "status": {"code": 403, "message": "image uses :latest"}})
    } else {
        json!({"allowed": true})
    }
}

#[test]
fn kubectl_a_routed_service_webhook_denies_with_the_cert_manager_issued_tls() {
    let dir = tempfile::tempdir().expect("dir");
    let sim = Sim::start(SimConfig {
        dir: Some(dir.path().to_path_buf()),
        cert_manager: true,
        ..Default::default()
    })
    .expect("simulator starts");
    let d = dir.path().to_str().expect("utf-8 path");
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("chain.yaml", CHAIN)]);
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        "certificate/guard-tls",
        "-n",
        "guard-system",
        "--timeout=30s",
    ]);
    let server = WebhookServer::start_with_pem(
        &pem(&k, "tls.crt"),
        &pem(&k, "tls.key"),
        Arc::new(no_latest),
    );
    k.ok(&["apply", "-f", &k.file("operator.yaml", OPERATOR)]);
    eventually("caBundle injected", 20, || {
        let b = k.ok(&[
            "get",
            "validatingwebhookconfiguration",
            "guard",
            "-o",
            "jsonpath={.webhooks[0].clientConfig.caBundle}",
        ]);
        (!b.is_empty()).then_some(())
    });

    // No pods, no route: the webhook has no endpoints (failurePolicy Fail).
    let out = k.run(&["create", "deployment", "early", "--image=nginx:1.27"]);
    assert!(
        out.stderr
            .contains("no endpoints available for service \"guard\""),
        "{}",
        out.stderr
    );

    let addr = server.addr.to_string();
    let (code, out, err) = sim_cmd(&["route", "--dir", d, "guard-system/guard:443", &addr]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), format!("guard-system/guard:443 -> {addr}"));
    let (_, listed, _) = sim_cmd(&["route", "--dir", d]);
    assert!(
        listed.contains(&format!("guard-system/guard:443 -> {addr}")),
        "{listed}"
    );

    let out = k.run(&["create", "deployment", "web", "--image=nginx:latest"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("admission webhook \"no-latest-tag.guard.piceli.dev\" denied the request: image uses :latest"),
        "{}",
        out.stderr
    );
    k.ok(&["create", "deployment", "pinned", "--image=nginx:1.27"]);
    // The webhook also admits UPDATEs, which the Deployment controller may already be making to
    // `pinned` (its revision annotation): only the CREATEs are counted.
    let creates = server
        .seen()
        .iter()
        .filter(|r| r["operation"] == "CREATE")
        .count();
    assert_eq!(creates, 2, "one review per create");

    let (code, out, err) = sim_cmd(&["route", "--dir", d, "--delete", "guard-system/guard:443"]);
    assert_eq!(code, 0, "{out}{err}");
    let out = k.run(&["create", "deployment", "late", "--image=nginx:1.27"]);
    assert!(
        out.stderr.contains("no endpoints available"),
        "{}",
        out.stderr
    );

    // The Rust API does the same.
    sim.route("guard-system", "guard", 443, server.addr)
        .expect("route");
    std::thread::sleep(Duration::from_millis(50));
    k.ok(&["create", "deployment", "late", "--image=nginx:1.27"]);
    // A malformed target is a usage error: a refusal (exit 2) with its code.
    let (code, _, err) = sim_cmd(&["route", "--dir", d, "guard-system/Guard", &addr]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error[PCL0215]:"), "{err}");
    assert!(err.contains("is not NAMESPACE/SERVICE[:PORT]"), "{err}");
}
