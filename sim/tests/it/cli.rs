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
    assert_eq!(code, 2, "refused: exit 2");
    assert!(
        err.starts_with(&format!(
            "error[PCL0211]: cannot listen on 127.0.0.1:{port}"
        )),
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
        err.starts_with("error[PCL0210]:")
            && err.contains("a-file/cluster")
            && err.contains("Not a directory"),
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
    assert_eq!(code, 2, "refused: exit 2");
    assert!(
        err.starts_with("error[PCL0213]: a server is already running"),
        "{err}"
    );

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
    // Not running is exit 1 with a code and a fix, as for every Piceli error (3 means "approval required").
    let (code, out, err) = sim_cmd(&["status", "--dir", d]);
    assert_eq!(code, 1);
    assert_eq!(out.trim(), "not running");
    assert!(
        err.starts_with("error[PCL0214]: no server is running"),
        "{err}"
    );
    assert!(
        err.contains("help: start one with `piceli sim start --dir"),
        "{err}"
    );
    let (code, _, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[PCL0214]: no server is running"),
        "{err}"
    );
}

#[test]
fn two_servers_share_one_directory() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let (code, out, err) = sim_cmd(&["start", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
    // Stopped on drop too, so a failing assertion leaves no background server behind.
    struct Stopped(String);
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = sim_cmd(&["stop", "--dir", &self.0]);
        }
    }
    let _stop = Stopped(d.to_string());
    let first_url = std::fs::read_to_string(dir.path().join("sim.pid"))
        .expect("pid file")
        .lines()
        .nth(1)
        .unwrap_or("")
        .to_string();
    // Killed on drop, so a failing assertion leaves no server behind.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut second = Killed(
        Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
            .args(["serve", "--dir", d])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("second server"),
    );
    let mut line = String::new();
    {
        use std::io::BufRead;
        let stdout = second.0.stdout.as_mut().expect("stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("first line");
    }
    let second_url = line.split_whitespace().nth(2).unwrap_or("").to_string();
    assert!(
        second_url.starts_with("https://127.0.0.1:") && second_url != first_url,
        "{line}"
    );
    let cache = tempfile::tempdir().expect("cache");
    let kubectl = |server: &str, args: &[&str]| {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .arg("--server")
            .arg(server)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", cache.path())
            .output()
            .unwrap_or_else(|e| {
                panic!("kubectl is required for these tests and could not be run: {e}")
            });
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, _) = kubectl(
        &first_url,
        &["create", "configmap", "shared", "--from-literal=a=b"],
    );
    assert_eq!(code, 0);
    let (code, out) = kubectl(
        &second_url,
        &["get", "configmap", "shared", "-o", "jsonpath={.data.a}"],
    );
    assert_eq!((code, out.as_str()), (0, "b"));
    drop(second);
    let (code, out, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn start_takes_controller_flags() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let (code, out, err) = sim_cmd(&["start", "--dir", d, "--no-controllers"]);
    assert_eq!(code, 0, "{out}{err}");
    let kubectl = |args: &[&str]| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", dir.path().join("kube-cache"))
            .args(args)
            .output()
            .expect("kubectl is required for these tests")
    };
    let made = kubectl(&["create", "deployment", "web", "--image=nginx:1.27"]);
    assert!(made.status.success(), "{made:?}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let rs = kubectl(&["get", "rs", "-o", "name"]);
    assert!(rs.status.success());
    assert!(
        rs.stdout.is_empty(),
        "no controllers, no ReplicaSets: {rs:?}"
    );
    let (code, _, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn sim_compact_makes_a_watch_from_before_it_410_gone() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let (code, out, err) = sim_cmd(&["start", "--dir", d, "--watch-history", "100"]);
    assert_eq!(code, 0, "{out}{err}");
    struct Stopped(String);
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = sim_cmd(&["stop", "--dir", &self.0]);
        }
    }
    let _stop = Stopped(d.to_string());
    let kubectl = |args: &[&str]| {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", dir.path().join("kube-cache"))
            .args(args)
            .output()
            .expect("kubectl is required for these tests");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, rv) = kubectl(&[
        "create",
        "configmap",
        "before",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]);
    assert_eq!(code, 0);
    let watch = format!(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1"
    );
    // Before compaction the watch resumes (and ends at its timeout with no events).
    let (code, out) = kubectl(&["get", "--raw", &watch]);
    assert_eq!((code, out.as_str()), (0, ""), "{out}");
    let (code, _) = kubectl(&["create", "configmap", "after"]);
    assert_eq!(code, 0);
    let (code, out, err) = sim_cmd(&["compact", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("compacted"), "{out}");
    let (code, out) = kubectl(&["get", "--raw", &watch]);
    assert_eq!(code, 0, "{out}");
    let event: serde_json::Value =
        serde_json::from_str(out.lines().next().unwrap_or("")).expect("one JSON event");
    assert_eq!(event["type"], "ERROR", "{out}");
    assert_eq!(event["object"]["code"], 410, "{out}");
    assert_eq!(event["object"]["reason"], "Expired", "{out}");
    let (code, _, err) = sim_cmd(&["compact", "--dir", "/nonexistent/piceli-sim-dir"]);
    assert_eq!(code, 1);
    assert!(err.contains("no server is running"), "{err}");
}

#[test]
fn a_background_server_logs_each_request_when_asked() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let out = Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
        .args(["start", "--dir", d])
        .env("PICELI_SIM_LOG", "requests")
        .output()
        .expect("run piceli-sim");
    assert!(out.status.success(), "{out:?}");
    let cache = tempfile::tempdir().expect("cache");
    let kubectl = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(dir.path().join("kubeconfig"))
        .args(["get", "configmap", "missing", "-n", "default"])
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl is required for these tests and could not be run: {e}")
        });
    assert!(!kubectl.status.success(), "{kubectl:?}");
    let (code, out, err) = sim_cmd(&["stop", "--dir", d]);
    assert_eq!(code, 0, "{out}{err}");
    let log = std::fs::read_to_string(dir.path().join("sim.log")).expect("sim.log");
    let line = log
        .lines()
        .find(|l| l.contains("uri=/api/v1/namespaces/default/configmaps/missing"))
        .unwrap_or_else(|| panic!("no request line in {log}"));
    for part in [
        "piceli_sim::request",
        "HTTP",
        "verb=GET",
        "status=404",
        "latency_us=",
        "user_agent=kubectl",
    ] {
        assert!(line.contains(part), "{part}: {line}");
    }
    // Without the variable there is no request log.
    let quiet = tempfile::tempdir().expect("dir");
    let q = quiet.path().to_str().expect("utf-8 path");
    let (code, out, err) = sim_cmd(&["start", "--dir", q]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = sim_cmd(&["stop", "--dir", q]);
    assert_eq!(code, 0, "{out}{err}");
    let log = std::fs::read_to_string(quiet.path().join("sim.log")).expect("sim.log");
    assert!(!log.contains("piceli_sim::request"), "{log}");
}
