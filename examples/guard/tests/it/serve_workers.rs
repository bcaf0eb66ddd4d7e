//! `guard serve --workers N` as a user runs it: the server runs on one worker thread unless told
//! otherwise, `--workers 3` runs three, both answer AdmissionReviews over HTTPS (curl, files from
//! `--tls-cert`/`--tls-key`), and `--workers 0` is refused before anything is served.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use support::{free_port, stop};

fn pair(dir: &Path) {
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    std::fs::write(dir.join("tls.crt"), cert.pem()).expect("write cert");
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("write key");
}

/// curl against the self-signed pair, `localhost` resolved to the server's port.
fn curl(dir: &Path, port: u16, args: &[&str]) -> Option<String> {
    let out = Command::new("curl")
        .args(["--silent", "--show-error", "--fail", "--max-time", "10"])
        .arg("--cacert")
        .arg(dir.join("tls.crt"))
        .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("curl is required for this test and could not be run: {e}"));
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn start(dir: &Path, port: u16, extra: &[&str]) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_guard"))
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", dir)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--tls-cert")
        .arg(dir.join("tls.crt"))
        .arg("--tls-key")
        .arg(dir.join("tls.key"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("guard serve starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    let url = format!("https://localhost:{port}/readyz");
    while curl(dir, port, &[&url]).is_none() {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("guard serve exited early: {status}");
        }
        assert!(Instant::now() < deadline, "guard serve never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

/// The runtime's worker threads of a process (named `piceli-worker`; the server starts no blocking
/// threads, which would share the name, when idle).
fn workers(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the process's threads")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "piceli-worker")
        .count()
}

fn review(uid: &str) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "operation": "CREATE",
            "namespace": "shop",
            "userInfo": {"username": "alice"},
            "object": {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]}}}
            }
        }
    })
    .to_string()
}

fn answers_reviews(dir: &Path, port: u16) {
    let url = format!("https://localhost:{port}/validate/no-latest-tag");
    for i in 0..4 {
        let uid = format!("0df28fbd-5f5f-11e8-bc74-36e6bb28081{i}");
        let body = curl(
            dir,
            port,
            &[
                "-H",
                "Content-Type: application/json",
                "--data-binary",
                &review(&uid),
                &url,
            ],
        )
        .expect("the webhook answers");
        let answer: Value = serde_json::from_str(&body).expect("an AdmissionReview");
        assert_eq!(answer["response"]["uid"], uid.as_str(), "{body}");
        assert_eq!(answer["response"]["allowed"], false, "{body}");
    }
}

#[test]
fn serve_runs_one_worker_unless_told_and_answers_with_any_number() {
    let dir = tempfile::tempdir().expect("temp dir");
    pair(dir.path());
    for (extra, expected) in [(&[][..], 1), (&["--workers", "3"][..], 3)] {
        let port = free_port().port();
        let child = start(dir.path(), port, extra);
        let threads = workers(child.id());
        answers_reviews(dir.path(), port);
        let status = stop(child);
        assert_eq!(threads, expected, "worker threads of serve {extra:?}");
        assert!(status.success(), "serve {extra:?} stopped with {status}");
    }
}

#[test]
fn zero_workers_are_refused_before_anything_is_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_guard"))
        .env_remove("KUBECONFIG")
        .env("HOME", dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "0"])
        .output()
        .expect("guard runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--workers"), "{stderr}");
}
