//! The `sim` commands through the stand-alone `piceli-sim` binary: clear errors for a taken port and
//! an unusable directory; `start`, `status` and `stop` managing a background server.

use std::process::Command;

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

#[test]
fn serve_reports_a_taken_port() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let (code, _, err) = sim_cmd(&["serve", "--dir", d, "--port", &port]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn serve_reports_an_unusable_directory() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let bad = file.join("cluster");
    let (code, _, err) = sim_cmd(&["serve", "--dir", bad.to_str().expect("utf-8 path")]);
    assert_eq!(code, 1);
    assert!(
        err.contains("a-file/cluster") && err.contains("Not a directory"),
        "{err}"
    );
}

#[test]
fn start_status_stop_manage_a_background_server() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let (code, out, err) = sim_cmd(&["start", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("piceli-sim running at https://127.0.0.1:"),
        "{out}"
    );
    let (code, out, _) = sim_cmd(&["status", "--dir", d]);
    assert_eq!(code, 0);
    assert!(out.starts_with("running at https://127.0.0.1:"), "{out}");
    let (code, _, err) = sim_cmd(&["start", "--dir", d]);
    assert_eq!(code, 1);
    assert!(err.contains("already running"), "{err}");

    // The kubeconfig it wrote works with kubectl.
    let cache = tempfile::tempdir().expect("cache");
    let kubectl = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(dir.path().join("kubeconfig"))
        .args(["get", "namespace", "default", "-o", "name"])
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl is required for these tests and could not be run: {e}")
        });
    assert_eq!(
        String::from_utf8_lossy(&kubectl.stdout).trim(),
        "namespace/default",
        "{}",
        String::from_utf8_lossy(&kubectl.stderr)
    );

    let (code, out, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = sim_cmd(&["status", "--dir", d]);
    assert_eq!(code, 3);
    assert_eq!(out.trim(), "not running");
    let (code, _, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 1);
    assert!(err.contains("no server is running"), "{err}");
}
