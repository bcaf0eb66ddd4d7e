//! The local cluster's kubelet pulls images of a loopback registry by digest: a pod of a digest the
//! registry lacks waits in `ErrImagePull`/`ImagePullBackOff` (read with the real kubectl), and starts once
//! the image is pushed.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use piceli_image::{ImageSpec, RegistryClient};
use piceli_sim::{Sim, SimConfig};
use support::LocalRegistry;

struct Kubectl {
    kubeconfig: std::path::PathBuf,
    cache: tempfile::TempDir,
}

impl Kubectl {
    /// Runs the real kubectl with its own cache and the sim's kubeconfig; fails the test without it.
    fn run(&self, args: &[&str]) -> (i32, String) {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", self.cache.path())
            .output()
            .unwrap_or_else(|e| {
                panic!("kubectl is required for this test and could not be run: {e}")
            });
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }
}

fn eventually(what: &str, mut f: impl FnMut() -> Option<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_of_an_unpushed_digest_backs_off_and_starts_once_pushed() {
    let registry = LocalRegistry::start();
    let sim = Sim::start(SimConfig::default()).expect("sim starts");
    let k = Kubectl {
        kubeconfig: sim.kubeconfig_path().to_path_buf(),
        cache: tempfile::tempdir().expect("cache"),
    };

    // An image of one small file (no cargo build needed here).
    let dir = tempfile::tempdir().expect("temp");
    let file = dir.path().join("hello");
    std::fs::write(&file, b"#!/bin/true\n").expect("write");
    let mut spec = ImageSpec::new(&file, "hello");
    spec.annotations.insert("test".into(), "sim-pull".into());
    let image = piceli_image::assemble(&spec, None).expect("assemble");
    let repo = registry.repo("shop/hello");
    let reference = repo.at(&image.digest);
    let pod = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"hello\",\"namespace\":\"default\"}},\
         \"spec\":{{\"containers\":[{{\"name\":\"app\",\"image\":\"{reference}\"}}]}}}}"
    );
    let path = dir.path().join("pod.json");
    std::fs::write(&path, pod).expect("write pod");
    let (code, out) = k.run(&["apply", "-f", &path.to_string_lossy()]);
    assert_eq!(code, 0, "{out}");

    let reason = |k: &Kubectl| {
        let (_, out) = k.run(&[
            "get",
            "pod/hello",
            "-o",
            "jsonpath={.status.phase}/{.status.containerStatuses[0].state.waiting.reason}",
        ]);
        out
    };
    let first = eventually("ErrImagePull", || {
        let r = reason(&k);
        r.contains("ImagePull").then_some(r)
    });
    assert!(first.starts_with("Pending/"), "{first}");
    eventually("ImagePullBackOff", || {
        let r = reason(&k);
        (r == "Pending/ImagePullBackOff").then_some(r)
    });
    let (_, events) = k.run(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=hello",
    ]);
    assert!(events.contains("Failed to pull image"), "{events}");
    let (_, message) = k.run(&[
        "get",
        "pod/hello",
        "-o",
        "jsonpath={.status.containerStatuses[0].state.waiting.message}",
    ]);
    assert!(message.contains("not found"), "{message}");

    RegistryClient::new(repo, None)
        .expect("client")
        .push(&image, None)
        .await
        .expect("push");
    let (code, out) = k.run(&[
        "wait",
        "--for=condition=Ready",
        "pod/hello",
        "--timeout=30s",
    ]);
    assert_eq!(code, 0, "{out}");
    let (_, phase) = k.run(&["get", "pod/hello", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(phase, "Running");
}
