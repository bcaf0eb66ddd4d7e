//! `status` and `access` on the hello binary against the test's cluster (the in-process local one with its
//! controllers on, or the real control plane of `PICELI_REAL_KUBECONFIG`; `access` and the never-ready
//! pods on the local cluster only):
//! the app's state before and after a deploy and when its pods never become ready, and real HTTP through
//! `access` forwards. Loopback only; every wait is bounded; HOME and KUBECONFIG are poisoned.

use assert_cmd::Command;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use piceli_sim::SimConfig;
use piceli_test_support::Cluster;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The hello binary's path.
const HELLO: &str = env!("CARGO_BIN_EXE_hello");

/// HOME with a poisoned ~/.kube/config, and KUBECONFIG pointing at it.
fn poison(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    home
}

fn hello(dir: &Path) -> Command {
    let home = poison(dir);
    let mut cmd = Command::new(HELLO);
    cmd.current_dir(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", home.join(".kube/config"));
    cmd
}

fn flags(sim: &Cluster) -> Vec<String> {
    vec![
        "--kubeconfig".into(),
        sim.kubeconfig_path().display().to_string(),
        "--context".into(),
        sim.context().into(),
    ]
}

fn json_of(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).expect("one JSON document on stdout")
}

/// plan + apply --approve.
fn deploy(sim: &Cluster, dir: &Path) {
    let plan = hello(dir)
        .arg("plan")
        .args(flags(sim))
        .args(["-o", "json"])
        .assert()
        .code(3);
    let hash = json_of(&plan)["hash"].as_str().expect("hash").to_string();
    hello(dir)
        .args(["apply", "--approve", &hash])
        .args(flags(sim))
        .assert()
        .success();
}

fn status_json(sim: &Cluster, dir: &Path) -> (Option<i32>, Value) {
    let out = hello(dir)
        .arg("status")
        .args(flags(sim))
        .args(["-o", "json"])
        .output()
        .expect("run status");
    let doc = serde_json::from_slice(&out.stdout).expect("status prints one JSON document");
    (out.status.code(), doc)
}

/// Poll `status` until its state is `want` (bounded).
fn wait_for_state(sim: &Cluster, dir: &Path, want: &str) -> (Option<i32>, Value) {
    wait_until(sim, dir, |doc| doc["state"] == want)
}

/// Poll `status` until `done` holds for its document (bounded; the last document either way).
fn wait_until(sim: &Cluster, dir: &Path, done: impl Fn(&Value) -> bool) -> (Option<i32>, Value) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, doc) = status_json(sim, dir);
        if done(&doc) || Instant::now() > deadline {
            return (code, doc);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn patch_web(sim: &Cluster, patch: Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = sim.client().expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "hello");
        api.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch the Deployment");
    });
}

#[test]
fn status_is_unknown_before_a_deploy_and_up_after() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");

    let (code, before) = status_json(&sim, dir.path());
    assert_eq!(code, Some(1), "{before}");
    assert_eq!(before["schema"], 1);
    assert_eq!(before["state"], "unknown");
    let why = before["reasons"][0].as_str().unwrap_or_default();
    assert!(why.contains("nothing was ever deployed"), "{why}");

    deploy(&sim, dir.path());
    let (code, after) = wait_for_state(&sim, dir.path(), "up");
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(after["state"], "up");
    assert_eq!(after["release"]["journal"], 1);
    assert_eq!(after["release"]["cluster"], 1);
    assert_eq!(after["release"]["approval"]["kind"], "approved", "{after}");
    assert!(
        after["release"]["approval"]["command"]
            .as_str()
            .is_some_and(|c| c.starts_with("apply --approve ")),
        "{after}"
    );
    let web = &after["workloads"][0];
    assert_eq!(
        (&web["kind"], &web["name"], &web["health"]),
        (&json!("Deployment"), &json!("web"), &json!("ready"))
    );
    assert_eq!((&web["ready"], &web["desired"]), (&json!(2), &json!(2)));
    assert_eq!(after["urls"][0]["kind"], "forward");
    assert_eq!(after["urls"][0]["url"], "http://127.0.0.1:18080");

    let text = hello(dir.path())
        .arg("status")
        .args(flags(&sim))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(text.contains(": up"), "{text}");
    assert!(text.contains("http://127.0.0.1:18080"), "{text}");
    assert!(text.contains("`access`"), "says access serves it: {text}");
}

#[test]
/// On the local cluster only: its kubelet's `never-ready` behavior runs pods that never become ready (kwok
/// would leave them pending, a different reason).
fn never_ready_pods_make_the_app_degraded_then_down_with_the_reason_sim_only() {
    let sim = Cluster::start_sim(SimConfig::default());
    let dir = tempfile::tempdir().expect("temp dir");
    deploy(&sim, dir.path());
    wait_for_state(&sim, dir.path(), "up");

    // A rolling update to pods that never become ready: the old pods keep serving.
    patch_web(
        &sim,
        json!({"spec": {"template": {"metadata": {"annotations": {"sim.piceli.dev/behavior": "never-ready"}}}}}),
    );
    let not_ready = |doc: &Value| {
        doc["workloads"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("running but not ready"))
    };
    let (code, doc) = wait_until(&sim, dir.path(), |d| {
        d["state"] == "degraded" && not_ready(d)
    });
    assert_eq!(doc["state"], "degraded", "{doc}");
    assert_eq!(code, Some(1));
    assert_eq!(doc["workloads"][0]["health"], "progressing");
    let reason = doc["workloads"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("running but not ready"), "{reason}");

    // Recreate: the old pods go, the new ones never become ready.
    patch_web(
        &sim,
        json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null}}}),
    );
    let (code, doc) = wait_until(&sim, dir.path(), |d| d["state"] == "down" && not_ready(d));
    assert_eq!(doc["state"], "down", "{doc}");
    assert_eq!(code, Some(1));
    assert_eq!(doc["workloads"][0]["health"], "unavailable");
    assert_eq!(doc["workloads"][0]["ready"], 0);
    let why = doc["reasons"][0].as_str().unwrap_or_default();
    assert!(
        why.contains("Deployment web") && why.contains("not ready"),
        "{why}"
    );
}

/// A running `access` child and its stdout lines.
struct Access {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Access {
    fn start(sim: &Cluster, dir: &Path, extra: &[&str]) -> Access {
        let home = poison(dir);
        let mut child = std::process::Command::new(HELLO)
            .current_dir(dir)
            .env("HOME", &home)
            .env("KUBECONFIG", home.join(".kube/config"))
            .arg("access")
            .args(flags(sim))
            .args(["-o", "json", "--port", "web=0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn access");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Access { child, lines }
    }

    /// The next event whose `event` is `kind` (bounded).
    fn wait_event(&self, kind: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{kind}` event from access in time"));
            let event: Value = serde_json::from_str(&line).expect("JSON lines");
            if event["event"] == kind {
                return event;
            }
        }
    }

    fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "access did not exit in time");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Access {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 GET to 127.0.0.1:port; the whole response.
fn http_get(port: u16, path: &str) -> String {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect to the forward");
    tcp.set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    write!(
        tcp,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut response = String::new();
    let _ = tcp.read_to_string(&mut response);
    response
}

/// A tiny HTTP server on 127.0.0.1:0 answering every request with `body`.
fn test_server(body: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test server");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for tcp in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut tcp = tcp;
                let mut seen = Vec::new();
                let mut buf = [0u8; 1024];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = write!(
                    tcp,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    addr
}

fn send_sigterm(child: &Child) {
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(ok.success());
}

#[test]
/// On the local cluster only: `access` forwards ports, which needs a kubelet.
fn access_serves_http_through_the_forward_to_a_mapped_server_and_stops_on_sigterm_sim_only() {
    let sim = Cluster::start_sim(SimConfig::default());
    let dir = tempfile::tempdir().expect("temp dir");
    let server = test_server("hello from the test server");
    sim.sim()
        .expect("the local cluster")
        .map_port("hello", "app.kubernetes.io/component=web", 80, server)
        .expect("map port");
    deploy(&sim, dir.path());

    let mut access = Access::start(&sim, dir.path(), &[]);
    let ready = access.wait_event("ready");
    assert_eq!(ready["name"], "web");
    assert_eq!(ready["service_port"], 80);
    let pod = ready["pod"].as_str().expect("a ready pod is named");
    assert!(pod.starts_with("web-"), "{pod}");
    let port = u16::try_from(ready["local_port"].as_u64().expect("port")).expect("u16");
    assert_ne!(port, 0);
    assert_eq!(ready["url"], format!("http://127.0.0.1:{port}"));

    let response = http_get(port, "/");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.ends_with("hello from the test server"),
        "{response}"
    );
    let health = access.wait_event("health");
    assert_eq!(health["healthy"], true, "{health}");
    assert_eq!(health["status"], 200);

    send_sigterm(&access.child);
    access.wait_event("stopped");
    assert_eq!(access.wait_exit(), Some(0));
    TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
}

#[test]
/// On both clusters: a forward through the API server to a ready pod (on the real control plane kwok's
/// kubelet API forwards pod ports to the static responder of scripts/real-cluster.sh).
fn access_forwards_http_to_a_ready_pod_and_stops_on_sigterm() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    deploy(&cluster, dir.path());

    let mut access = Access::start(&cluster, dir.path(), &["--only", "web"]);
    let ready = access.wait_event("ready");
    let pod = ready["pod"].as_str().expect("a ready pod is named");
    assert!(pod.starts_with("web-"), "{pod}");
    let port = u16::try_from(ready["local_port"].as_u64().expect("port")).expect("u16");
    let response = http_get(port, "/");
    assert!(
        response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200"),
        "{response}"
    );
    send_sigterm(&access.child);
    access.wait_event("stopped");
    assert_eq!(access.wait_exit(), Some(0));
    TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
}

#[test]
/// On the local cluster only: the sim's responder names the pod that answers (kwok's has no pods).
fn access_without_a_mapping_reaches_the_sims_responder_sim_only() {
    let sim = Cluster::start_sim(SimConfig::default());
    let dir = tempfile::tempdir().expect("temp dir");
    deploy(&sim, dir.path());

    let access = Access::start(&sim, dir.path(), &["--only", "web"]);
    let ready = access.wait_event("ready");
    let port = u16::try_from(ready["local_port"].as_u64().expect("port")).expect("u16");
    let response = http_get(port, "/");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let first = response
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
    assert!(first.starts_with("web-"), "names the pod: {response}");

    // The pod goes away: the next connection reaches another one.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let pods: Api<k8s_openapi::api::core::v1::Pod> =
            Api::namespaced(sim.client().expect("client"), "hello");
        pods.delete(&first, &Default::default())
            .await
            .expect("delete the pod");
    });
    let response = http_get(port, "/");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let second = response.lines().last().unwrap_or_default().trim();
    assert!(
        second.starts_with("web-") && second != first,
        "another pod answers: {first} then {second}"
    );
}

#[test]
fn help_json_lists_status_and_access_as_reads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = hello(dir.path()).arg("help-json").assert().success();
    let tree = json_of(&out);
    let command = |name: &str| {
        tree["commands"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(command("status")["touches_cluster"], "reads");
    assert_eq!(command("status")["requires_approval"], false);
    let access = command("access");
    assert!(
        access["touches_cluster"]
            .as_str()
            .is_some_and(|t| t.starts_with("reads")),
        "{access}"
    );
    let args: Vec<&str> = access["arguments"]
        .as_array()
        .map(|a| a.iter().filter_map(|a| a["long"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(args, ["only", "port"]);
}

#[test]
fn access_refuses_a_taken_port_and_a_killed_access_leaves_no_listener() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");

    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let out = hello(dir.path())
        .args(["access", "--port", &format!("web={port}")])
        .args(flags(&sim))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0120"), "{stderr}");
    assert!(
        stderr.contains(&port.to_string()),
        "names the port: {stderr}"
    );
    assert!(stderr.contains("--only"), "says how to fix it: {stderr}");
    drop(taken);

    let unknown = hello(dir.path())
        .args(["access", "--only", "nope"])
        .args(flags(&sim))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&unknown.get_output().stderr).to_string();
    assert!(
        stderr.contains("PCL0121") && stderr.contains("web"),
        "{stderr}"
    );

    // Nothing deployed: access still listens (no ready pod yet); SIGKILL takes the listener with it.
    let mut access = Access::start(&sim, dir.path(), &[]);
    let ready = access.wait_event("ready");
    assert_eq!(ready["pod"], Value::Null);
    let port = u16::try_from(ready["local_port"].as_u64().expect("port")).expect("u16");
    TcpStream::connect(("127.0.0.1", port)).expect("listening while it runs");
    access.child.kill().expect("SIGKILL");
    let _ = access.child.wait();
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "connection refused after the kill"
    );
    TcpListener::bind(("127.0.0.1", port)).expect("the port can be bound again");
}
