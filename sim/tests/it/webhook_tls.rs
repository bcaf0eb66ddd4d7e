//! Webhook TLS as Go's `crypto/x509` verifies it for kube-apiserver, through the real kubectl: the
//! usual recipe — `openssl req -x509` (a self-signed certificate with `CA:TRUE`) serving the webhook
//! and given as its own `caBundle` — is accepted; a certificate for another name or address, one of
//! an unknown authority (also the classic regenerated CA of the same name), an expired one and one
//! not yet valid are refused, each worded as kube-apiserver 1.33 words it (`failed calling webhook
//! "NAME": failed to call webhook: Post "URL?timeout=10s": tls: failed to verify certificate: x509:
//! …`, Go's `crypto/x509` text).

use crate::common;
use crate::webhook;

use std::process::Command;
use std::sync::Arc;

use common::Kubectl;
use serde_json::{Value, json};
use webhook::{WebhookServer, b64};

/// `openssl req -x509` for `san`: (certificate PEM, key PEM).
fn openssl_self_signed(dir: &std::path::Path, san: &str) -> (String, String) {
    openssl_self_signed_as(dir, "/CN=webhook", san)
}

/// `openssl req -x509 -subj SUBJECT` for `san`: (certificate PEM, key PEM).
fn openssl_self_signed_as(dir: &std::path::Path, subject: &str, san: &str) -> (String, String) {
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
            subject,
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
    let port = wrong.addr.port();
    let url = format!("https://127.0.0.1:{port}/validate");
    k.ok(&["apply", "-f", &k.file("hook.yaml", &config(&url, &other))]);
    let out = k.run(&["create", "deployment", "again", "--image=nginx:1.27"]);
    assert!(
        out.stderr.contains(&refused(
            port,
            "x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs"
        )),
        "{}",
        out.stderr
    );
}

/// kube-apiserver's message for a webhook call to 127.0.0.1:`port` refused by TLS verification.
fn refused(port: u16, x509: &str) -> String {
    format!(
        "Internal error occurred: failed calling webhook \"no-latest.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=10s\": tls: failed to verify certificate: {x509}"
    )
}

/// Serves `cert`/`key` as the webhook with `ca_pem` as its caBundle and returns kubectl's stderr for a
/// Deployment create, which the call's failure refuses.
fn create_through(k: &Kubectl, cert: &str, key: &str, ca_pem: &str) -> (u16, String) {
    let server = WebhookServer::start_with_pem(cert, key, Arc::new(deny_latest));
    let port = server.addr.port();
    let url = format!("https://127.0.0.1:{port}/validate");
    k.ok(&["apply", "-f", &k.file("hook.yaml", &config(&url, ca_pem))]);
    let out = k.run(&["create", "deployment", "web", "--image=nginx:1.27"]);
    assert_ne!(out.code, 0, "{out:?}");
    (port, out.stderr)
}

#[test]
fn kubectl_a_certificate_for_another_address_is_valid_for_it_not_for_the_host() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, key) = openssl_self_signed(k.work.path(), "IP:127.0.0.2,IP:::1");
    let (port, stderr) = create_through(&k, &cert, &key, &cert);
    assert!(
        stderr.contains(&refused(
            port,
            "x509: certificate is valid for 127.0.0.2, ::1, not 127.0.0.1\n"
        )),
        "{stderr}"
    );
}

#[test]
fn kubectl_a_service_webhook_certificate_for_another_service_names_both() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, key) = openssl_self_signed(
        k.work.path(),
        "DNS:other.webhooks.svc,DNS:*.other.svc,IP:127.0.0.1",
    );
    let server = WebhookServer::start_with_pem(&cert, &key, Arc::new(deny_latest));
    k.ok(&["create", "namespace", "webhooks"]);
    k.ok(&[
        "create",
        "service",
        "clusterip",
        "hook",
        "-n",
        "webhooks",
        "--tcp=443:8443",
    ]);
    sim.route("webhooks", "hook", 443, server.addr)
        .expect("route");
    let cfg = config("https://unused", &cert).replace(
        "url: \"https://unused\"",
        "service: {namespace: webhooks, name: hook, path: /validate}",
    );
    k.ok(&["apply", "-f", &k.file("hook.yaml", &cfg)]);
    let out = k.run(&["create", "deployment", "web", "--image=nginx:1.27"]);
    assert!(
        out.stderr.contains(
            "Internal error occurred: failed calling webhook \"no-latest.example.com\": failed to call webhook: Post \"https://hook.webhooks.svc:443/validate?timeout=10s\": tls: failed to verify certificate: x509: certificate is valid for other.webhooks.svc, *.other.svc, not hook.webhooks.svc\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn kubectl_a_certificate_of_an_unknown_authority_is_refused_with_go_s_hint() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, key) = openssl_self_signed(k.work.path(), "IP:127.0.0.1");
    // A bundle of another authority: no candidate issuer at all.
    let (stranger, _) = openssl_self_signed_as(k.work.path(), "/CN=someone-else", "DNS:x");
    let (port, stderr) = create_through(&k, &cert, &key, &stranger);
    assert!(
        stderr.contains(&refused(
            port,
            "x509: certificate signed by unknown authority\n"
        )),
        "{stderr}"
    );
    // The certificate regenerated under the same name while the bundle kept the old one: Go names
    // the candidate that did not sign it.
    let (old, _) = openssl_self_signed(k.work.path(), "IP:127.0.0.1");
    let (port, stderr) = create_through(&k, &cert, &key, &old);
    assert!(
        stderr.contains(&refused(
            port,
            "x509: certificate signed by unknown authority (possibly because of \"x509: ECDSA verification failure\" while trying to verify candidate authority certificate \"webhook\")\n"
        )),
        "{stderr}"
    );
}

/// A self-signed certificate for 127.0.0.1 valid from `not_before` to `not_after` (rcgen):
/// (certificate PEM, key PEM).
fn valid_between(not_before: (i32, u8, u8), not_after: (i32, u8, u8)) -> (String, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.subject_alt_names.push(rcgen::SanType::IpAddress(
        std::net::Ipv4Addr::LOCALHOST.into(),
    ));
    params.not_before = rcgen::date_time_ymd(not_before.0, not_before.1, not_before.2);
    params.not_after = rcgen::date_time_ymd(not_after.0, not_after.1, not_after.2);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("certificate");
    (cert.pem(), key.serialize_pem())
}

/// The current time Go quoted in `x509: certificate has expired or is not yet valid: current time T
/// is RELATION BOUND`, checked to be now; returns the text after it.
fn current_time_then(stderr: &str, port: u16) -> String {
    let prefix = refused(
        port,
        "x509: certificate has expired or is not yet valid: current time ",
    );
    let at = stderr
        .find(&prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {stderr}"));
    let rest = &stderr[at + prefix.len()..];
    let (time, after) = rest.split_once(' ').expect("a time");
    assert!(time.ends_with('Z') && !time.contains('.'), "{time}");
    let quoted: jiff::Timestamp = time.parse().expect("an RFC 3339 time");
    let off = (jiff::Timestamp::now().as_second() - quoted.as_second()).abs();
    assert!(off < 120, "current time {time} is {off} s off");
    after.lines().next().unwrap_or("").to_string()
}

#[test]
fn kubectl_an_expired_or_not_yet_valid_certificate_is_refused_with_the_times() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, key) = valid_between((2020, 1, 1), (2021, 1, 1));
    let (port, stderr) = create_through(&k, &cert, &key, &cert);
    assert_eq!(
        current_time_then(&stderr, port),
        "is after 2021-01-01T00:00:00Z"
    );
    let (cert, key) = valid_between((2090, 1, 1), (2091, 1, 1));
    let (port, stderr) = create_through(&k, &cert, &key, &cert);
    assert_eq!(
        current_time_then(&stderr, port),
        "is before 2090-01-01T00:00:00Z"
    );
}

#[test]
fn kubectl_a_webhook_serving_plain_http_is_refused_as_go_s_client_refuses_it() {
    // A webhook server started without TLS: it answers the ClientHello with an HTTP 400, as Go's
    // net/http, hyper and Python's http.server do.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in listener.incoming().map_while(Result::ok) {
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request",
            );
        }
    });
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (cert, _) = openssl_self_signed(k.work.path(), "IP:127.0.0.1");
    let url = format!("https://127.0.0.1:{port}/validate");
    k.ok(&["apply", "-f", &k.file("hook.yaml", &config(&url, &cert))]);
    let out = k.run(&["create", "deployment", "web", "--image=nginx:1.27"]);
    assert!(
        out.stderr.contains(&format!(
            "Internal error occurred: failed calling webhook \"no-latest.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=10s\": http: server gave HTTP response to HTTPS client\n"
        )),
        "{}",
        out.stderr
    );
}
