//! The guard with the local cluster's built-in cert-manager, through the real kubectl: `guard apply`
//! creates the operator's Issuers and Certificate, the cluster issues the serving certificate into the
//! Secret `guard-system/guard-tls` and injects its CA into the webhook configurations, `guard serve
//! --tls-from-secret` serves with it (routed as the operator's Service by `RunningSim::route`), a
//! `:latest` Deployment is refused; then the Secret is lost, cert-manager issues a new certificate,
//! `serve` picks it up without a restart, and the webhook keeps refusing.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use piceli_sim::{Sim, SimConfig};

use crate::support;
use support::{
    LATEST, deploy, free_port, issued, kubectl, serve_from_secret, stop, wait_for,
    wait_for_ca_bundles,
};

/// The SHA-256 fingerprint of a PEM certificate, as openssl prints it.
fn fingerprint(pem: &[u8]) -> String {
    let mut child = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("openssl is required for this test and could not be run: {e}"));
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(pem)
        .expect("write pem");
    let out = child.wait_with_output().expect("openssl");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The fingerprint of the certificate `serve` presents now.
fn served(addr: SocketAddr) -> String {
    let out = Command::new("openssl")
        .args(["s_client", "-connect", &addr.to_string()])
        .args(["-servername", "guard.guard-system.svc"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("openssl s_client");
    fingerprint(&out.stdout)
}

#[test]
fn the_clusters_cert_manager_issues_and_rotates_the_guards_certificate() {
    let sim = Sim::start(SimConfig {
        cert_manager: true,
        ..SimConfig::default()
    })
    .expect("local cluster starts");
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let kc = sim.kubeconfig_path().to_path_buf();
    let ok = |args: &[&str]| {
        let (code, stdout, stderr) = kubectl(&kc, dir, args);
        assert_eq!(code, 0, "kubectl {args:?}: {stdout}{stderr}");
        stdout
    };

    // `guard plan` + `apply`: the operator's objects, its Issuers and Certificate among them.
    deploy(&kc, dir);

    // cert-manager's part, done by the cluster: the Secret, and the CA in both configurations.
    let first = wait_for("the issued Secret", 30, || issued(&kc, dir, "tls.crt"));
    wait_for_ca_bundles(&kc, dir);

    // `serve` with the Secret's pair, reached as the operator's Service.
    let addr = free_port();
    let log = dir.join("serve.log");
    let server = serve_from_secret(addr, &kc, &log);
    sim.route("guard-system", "guard", 443, addr)
        .expect("route the operator's Service to serve");
    assert_eq!(
        served(addr),
        fingerprint(&first),
        "serves the issued certificate"
    );

    ok(&["create", "namespace", "shop"]);
    std::fs::write(dir.join("latest.yaml"), LATEST).expect("manifest");
    let refused = |when: &str| {
        let (code, _, stderr) = kubectl(&kc, dir, &["apply", "-f", "latest.yaml"]);
        assert_ne!(code, 0, "{when}: a :latest Deployment must be refused");
        assert!(
            stderr.contains("denied the request: image nginx:latest uses :latest"),
            "{when}: {stderr}"
        );
    };
    refused("with the first certificate");

    // The Secret is lost: cert-manager issues a new certificate, and `serve` follows it.
    ok(&["-n", "guard-system", "delete", "secret", "guard-tls"]);
    let second = wait_for("a new certificate", 30, || {
        issued(&kc, dir, "tls.crt").filter(|c| fingerprint(c) != fingerprint(&first))
    });
    wait_for("serve to present the new certificate", 30, || {
        (served(addr) == fingerprint(&second)).then_some(())
    });
    refused("with the rotated certificate");
    assert!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("certificate reloaded"),
        "serve says it reloaded"
    );

    let status = stop(server);
    assert!(status.success(), "serve exits 0 on SIGTERM: {status}");
    sim.stop();
}
