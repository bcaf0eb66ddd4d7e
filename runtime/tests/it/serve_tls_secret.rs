//! `serve --tls-from-secret NS/NAME` against the local cluster: the pair is read from a
//! `kubernetes.io/tls` Secret made with the real kubectl, written to private files, rewritten when the
//! Secret changes (`kubectl apply` of a new pair), and refused with PCL0177 when the Secret is missing
//! or has no key.

use piceli_runtime::Coded;
use std::path::Path;
use std::time::{Duration, Instant};

use piceli_core::Code;
use piceli_runtime::serve::SecretTls;
use piceli_test_support::Cluster;

/// kubectl that must succeed, run in `dir`: its stdout.
fn kubectl(kubeconfig: &Path, dir: &Path, args: &[&str]) -> String {
    let ran = piceli_test_support::kubectl::run(kubeconfig, Some(dir), args, None);
    assert_eq!(ran.code, 0, "kubectl {args:?}: {}", ran.stderr);
    ran.stdout
}

fn pair(dir: &Path, name: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec![name.to_string()])
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    let (cert, key) = (cert.pem(), key.serialize_pem());
    std::fs::write(dir.join("tls.crt"), &cert).expect("write cert");
    std::fs::write(dir.join("tls.key"), &key).expect("write key");
    (cert, key)
}

#[test]
fn the_pair_follows_the_secret_and_a_missing_one_is_refused() {
    let sim = Cluster::start();
    let kc = sim.kubeconfig_path().to_path_buf();
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let client = {
        let _inside = rt.enter();
        sim.client().expect("client")
    };

    let missing = rt.block_on(SecretTls::start(client.clone(), "default", "nope"));
    let err = missing.err().expect("a missing Secret is refused");
    assert_eq!(err.code(), Code::TlsSecretFailed);

    let (cert, key) = pair(dir, "guard.guard-system.svc");
    kubectl(
        &kc,
        dir,
        &[
            "create",
            "secret",
            "tls",
            "guard-tls",
            "--cert=tls.crt",
            "--key=tls.key",
        ],
    );
    let tls = rt
        .block_on(SecretTls::start(client.clone(), "default", "guard-tls"))
        .expect("the Secret is read");
    let (cert_path, key_path) = tls.files();
    assert_eq!(
        std::fs::read_to_string(&cert_path).expect("cert file"),
        cert
    );
    assert_eq!(std::fs::read_to_string(&key_path).expect("key file"), key);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_path)
            .expect("key metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the key is private");
    }

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let follower = rt.spawn(tls.follow(async move {
        let _ = stop_rx.await;
    }));
    let (rotated, _) = pair(dir, "guard.guard-system.svc");
    let manifest = kubectl(
        &kc,
        dir,
        &[
            "create",
            "secret",
            "tls",
            "guard-tls",
            "--cert=tls.crt",
            "--key=tls.key",
            "--dry-run=client",
            "-o",
            "yaml",
        ],
    );
    std::fs::write(dir.join("secret.yaml"), manifest).expect("write manifest");
    kubectl(&kc, dir, &["apply", "-f", "secret.yaml"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&cert_path).ok().as_deref() != Some(rotated.as_str()) {
        assert!(
            Instant::now() < deadline,
            "the rotated certificate was never written"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = stop_tx.send(());
    rt.block_on(follower).expect("the follower stops");
    assert!(
        !cert_path.exists(),
        "the private directory goes with the follower"
    );

    kubectl(
        &kc,
        dir,
        &[
            "create",
            "secret",
            "generic",
            "no-key",
            "--from-literal=tls.crt=x",
        ],
    );
    let err = rt
        .block_on(SecretTls::start(client, "default", "no-key"))
        .err()
        .expect("a Secret without tls.key is refused");
    assert!(err.to_string().contains("tls.key"), "{err}");
}
