//! What the guard's end-to-end tests share: the real kubectl with its own cache, a free port, waiting,
//! the issued TLS Secret's keys, `guard serve --tls-from-secret` started and stopped with SIGTERM, and
//! the `:latest` Deployment the guard refuses.

#![allow(dead_code)] // each test crate uses a part

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// A Deployment whose image has the `:latest` tag (the guard refuses it).
pub const LATEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: 'nginx:latest'}]
";

/// The real kubectl against the local cluster, run in `work` (see `piceli_test_support::kubectl`).
pub fn kubectl(kubeconfig: &Path, work: &Path, args: &[&str]) -> (i32, String, String) {
    piceli_test_support::kubectl::run(kubeconfig, Some(work), args, None).parts()
}

pub use piceli_test_support::process::free_port;

/// SIGTERM, then the exit status (graceful shutdown exits 0).
pub fn stop(child: Child) -> std::process::ExitStatus {
    piceli_test_support::process::stop(child, "guard serve")
}

/// Poll `check` until it gives a value, for at most `secs` seconds.
pub fn wait_for<T>(what: &str, secs: u64, check: impl FnMut() -> Option<T>) -> T {
    piceli_test_support::process::wait_for(what, Duration::from_secs(secs), check)
}

/// One key (`tls.crt`, `ca.crt`) of the Secret `guard-system/guard-tls` cert-manager issues, once it
/// exists.
pub fn issued(kc: &Path, dir: &Path, key: &str) -> Option<Vec<u8>> {
    let (code, out, _) = kubectl(
        kc,
        dir,
        &[
            "-n",
            "guard-system",
            "get",
            "secret",
            "guard-tls",
            "-o",
            "json",
        ],
    );
    if code != 0 {
        return None;
    }
    let secret: Value = serde_json::from_str(&out).ok()?;
    let b64 = secret["data"][key].as_str()?;
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(b64).ok()
}

/// Waits until cert-manager has injected its CA into every webhook of both configurations.
pub fn wait_for_ca_bundles(kc: &Path, dir: &Path) {
    for kind in [
        "validatingwebhookconfiguration",
        "mutatingwebhookconfiguration",
    ] {
        wait_for("the injected caBundle", 30, || {
            let (code, out, _) =
                kubectl(kc, dir, &["get", kind, "guard.guard-system", "-o", "json"]);
            let config: Value = serde_json::from_str(&out).ok().filter(|_| code == 0)?;
            config["webhooks"]
                .as_array()?
                .iter()
                .all(|w| {
                    w["clientConfig"]["caBundle"]
                        .as_str()
                        .is_some_and(|b| !b.is_empty())
                })
                .then_some(())
        });
    }
}

/// `guard serve` with the serving certificate read from the Secret (and followed); its log goes to
/// `log`.
pub fn serve_from_secret(addr: SocketAddr, kc: &Path, log: &Path) -> Child {
    let mut child = Command::cargo_bin("guard")
        .expect("guard binary")
        .args(["serve", "--listen", &addr.to_string()])
        .args(["--tls-from-secret", "guard-system/guard-tls"])
        .arg("--kubeconfig")
        .arg(kc)
        .args(["--context", "piceli-sim"])
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log file"))
        .spawn()
        .expect("guard serve starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "guard serve exited early ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(Instant::now() < deadline, "guard serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// `guard plan` then `guard apply --approve HASH` against the local cluster, from `dir`.
pub fn deploy(kc: &Path, dir: &Path) {
    let kcs = kc.display().to_string();
    let flags = [
        "--kubeconfig",
        &kcs,
        "--context",
        "piceli-sim",
        "-o",
        "json",
    ];
    let guard = |args: &[&str]| {
        Command::cargo_bin("guard")
            .expect("guard binary")
            .args(args)
            .args(flags)
            .current_dir(dir)
            .env_remove("KUBECONFIG")
            .env("HOME", dir)
            .output()
            .expect("guard runs")
    };
    let planned = guard(&["plan"]);
    assert_eq!(
        planned.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&planned.stderr)
    );
    let plan: Value = serde_json::from_slice(&planned.stdout).expect("plan JSON");
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let applied = guard(&["apply", "--approve", &hash, "--timeout", "0"]);
    assert!(
        applied.status.success(),
        "{}{}",
        String::from_utf8_lossy(&applied.stdout),
        String::from_utf8_lossy(&applied.stderr)
    );
}
