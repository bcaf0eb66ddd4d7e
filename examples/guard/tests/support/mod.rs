//! What the guard's end-to-end tests share: the real kubectl with its own cache, a free port, stopping
//! `guard serve` with SIGTERM, and the `:latest` Deployment the guard refuses.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

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

/// The real kubectl against the local cluster: its kubeconfig, KUBECONFIG cleared, a fresh cache.
pub fn kubectl(kubeconfig: &Path, work: &Path, args: &[&str]) -> (i32, String, String) {
    let cache = tempfile::tempdir().expect("cache dir");
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .current_dir(work)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A port nothing listens on now.
pub fn free_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// SIGTERM, then the exit status (graceful shutdown exits 0).
pub fn stop(mut child: Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("guard serve did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
