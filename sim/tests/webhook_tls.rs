//! Webhook TLS as Go's `crypto/x509` verifies it for kube-apiserver, through the real kubectl: the
//! usual recipe — `openssl req -x509` (a self-signed certificate with `CA:TRUE`) serving the webhook
//! and given as its own `caBundle` — is accepted; the same certificate for another name is not.

mod common;
#[path = "admission/webhook.rs"]
mod webhook;

use std::process::Command;
use std::sync::Arc;

use common::Kubectl;
use serde_json::{Value, json};
use webhook::{WebhookServer, b64};

/// `openssl req -x509` for `san`: (certificate PEM, key PEM).
fn openssl_self_signed(dir: &std::path::Path, san: &str) -> (String, String) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
        ])
        .args([
            "-subj",
            "/CN=webhook",
            "-addext",
            &format!("subjectAltName={san}"),
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap_or_else(|e| panic!("openssl is required for this test and could not be run: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        std::fs::read_to_string(cert).expect("cert"),
        std::fs::read_to_string(key).expect("key"),
    )
}

fn deny_latest(request: &Value) -> Value {
    let image = request
        .pointer("/object/spec/template/spec/containers/0/image")
        .and_then(Value::as_str)
        .unwrap_or("");
    if image.ends_with(":latest") {
        json!({"allowed": false, "status": {"message": "image uses :latest"}})
    } else {
        json!({"allowed": true})
    }
}

fn config(url: &str, ca_pem: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: self-signed}}
webhooks:
- name: no-latest.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {{url: \"{url}\", caBundle: {}}}
  rules: [{{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}}]
",
        b64(ca_pem)
    )
}

#[test]
fn kubectl_a_self_signed_webhook_certificate_is_its_own_ca_bundle() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, key) = openssl_self_signed(k.work.path(), "IP:127.0.0.1");
    let server = WebhookServer::start_with_pem(&cert, &key, Arc::new(deny_latest));
    let url = format!("https://127.0.0.1:{}/validate", server.addr.port());
    k.ok(&["apply", "-f", &k.file("hook.yaml", &config(&url, &cert))]);
    let out = k.run(&["create", "deployment", "web", "--image=nginx:latest"]);
    assert!(
        out.stderr.contains(
            "admission webhook \"no-latest.example.com\" denied the request: image uses :latest"
        ),
        "{}",
        out.stderr
    );
    k.ok(&["create", "deployment", "pinned", "--image=nginx:1.27"]);

    // The same recipe for another name is refused, worded as Go words it.
    let (other, other_key) = openssl_self_signed(k.work.path(), "DNS:elsewhere.example.com");
    let wrong = WebhookServer::start_with_pem(&other, &other_key, Arc::new(deny_latest));
    let url = format!("https://127.0.0.1:{}/validate", wrong.addr.port());
    k.ok(&["apply", "-f", &k.file("hook.yaml", &config(&url, &other))]);
    let out = k.run(&["create", "deployment", "again", "--image=nginx:1.27"]);
    assert!(
        out.stderr
            .contains("failed calling webhook \"no-latest.example.com\"")
            && out
                .stderr
                .contains("tls: failed to verify certificate: x509:")
            && out
                .stderr
                .contains("certificate is not valid for the webhook's host name"),
        "{}",
        out.stderr
    );
}
