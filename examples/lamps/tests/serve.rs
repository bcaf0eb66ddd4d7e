//! The lamps operator end to end on the local cluster (RBAC enforced), through the real kubectl:
//! `lamps plan` + `apply` put the CRD (before any Lamp), the ServiceAccount and the derived RBAC in
//! place; `lamps serve` runs on this machine with the ServiceAccount's token only, so any rule the
//! render missed fails here. A Lamp gets its status and an owned ConfigMap, and its deletion waits for
//! the finalizer's cleanup; an audited ConfigMap in another namespace gets an Event from the edge
//! controller; and with two `serve` processes, killing the leader with SIGKILL hands the Lease over.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use piceli_sim::{Sim, SimConfig};
use serde_json::Value;

/// The real kubectl: an explicit kubeconfig, KUBECONFIG cleared, a fresh discovery cache.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let cache = tempfile::tempdir().expect("cache dir");
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("kubectl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(kubeconfig: &Path, args: &[&str]) -> String {
    let (code, out, err) = kubectl(kubeconfig, args, None);
    assert_eq!(code, 0, "kubectl {args:?}: {out}{err}");
    out
}

fn wait_for(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn free_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// A plain HTTP/1.1 GET on loopback: (status, body).
fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// `lamps serve` with the ServiceAccount's kubeconfig, as pod `name`; its stderr goes to `log`.
fn serve(kubeconfig: &Path, addr: SocketAddr, name: &str, log: &Path) -> Child {
    let log = std::fs::File::create(log).expect("log file");
    Command::cargo_bin("lamps")
        .expect("lamps binary")
        .args([
            "serve",
            "--listen",
            &addr.to_string(),
            "--context",
            "piceli-sim",
        ])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("POD_NAME", name)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("lamps serve starts")
}

fn stop(mut child: Child) -> std::process::ExitStatus {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("lamps serve did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn json(kubeconfig: &Path, args: &[&str]) -> Option<Value> {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let (code, out, _) = kubectl(kubeconfig, &all, None);
    (code == 0)
        .then(|| serde_json::from_str(&out).ok())
        .flatten()
}

fn lamp(name: &str, color: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Lamp\nmetadata: {{name: {name}, namespace: lamps-system}}\nspec: {{color: {color}}}\n"
    )
}

/// Deploys the app with `plan` + `apply --approve` and writes a kubeconfig holding only the operator
/// ServiceAccount's token.
fn deploy(sim: &piceli_sim::RunningSim, dir: &Path) -> std::path::PathBuf {
    let kc = sim.kubeconfig_path().display().to_string();
    let flags = ["--kubeconfig", &kc, "--context", "piceli-sim", "-o", "json"];
    let lamps = |args: &[&str]| {
        Command::cargo_bin("lamps")
            .expect("lamps binary")
            .current_dir(dir)
            .env_remove("KUBECONFIG")
            .env("HOME", dir)
            .args(args)
            .args(flags)
            .output()
            .expect("lamps runs")
    };
    let planned = lamps(&["plan"]);
    assert_eq!(
        planned.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&planned.stderr)
    );
    let plan: Value = serde_json::from_slice(&planned.stdout).expect("plan JSON");
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let applied = lamps(&["apply", "--approve", &hash, "--timeout", "0"]);
    assert!(
        applied.status.success(),
        "{}{}",
        String::from_utf8_lossy(&applied.stdout),
        String::from_utf8_lossy(&applied.stderr)
    );
    let admin = sim.kubeconfig_path();
    for object in ["serviceaccount/lamps", "role/lamps", "rolebinding/lamps"] {
        ok(admin, &["-n", "lamps-system", "get", object]);
    }
    ok(admin, &["get", "crd/lamps.example.com"]);
    ok(admin, &["get", "clusterrole/lamps-system-lamps"]);
    let explained = ok(admin, &["explain", "lamps.spec"]);
    assert!(
        explained.contains("color"),
        "kubectl explain shows the schema: {explained}"
    );
    let token = ok(admin, &["-n", "lamps-system", "create", "token", "lamps"]);
    let yaml = sim.kubeconfig_yaml();
    let swapped: Vec<String> = yaml
        .lines()
        .map(|l| match l.trim_start().strip_prefix("token: ") {
            Some(_) => format!("    token: {}", token.trim()),
            None => l.to_string(),
        })
        .collect();
    let path = dir.join("operator.kubeconfig");
    std::fs::write(&path, swapped.join("\n") + "\n").expect("write kubeconfig");
    let (code, _, _) = kubectl(&path, &["-n", "lamps-system", "get", "secrets"], None);
    assert_ne!(code, 0, "the operator's token is not an admin's");
    path
}

#[test]
fn lamps_reconcile_audit_and_hand_over_with_the_operator_token_only() {
    let sim = Sim::start(SimConfig::default()).expect("local cluster starts");
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let admin = sim.kubeconfig_path().to_path_buf();
    let operator = deploy(&sim, dir);
    ok(&admin, &["create", "namespace", "team-a"]);

    let (a_addr, b_addr) = (free_port(), free_port());
    let a = serve(&operator, a_addr, "lamps-a", &dir.join("a.log"));
    let ready = |addr| http_get(addr, "/readyz").is_some_and(|(s, _)| s == 200);
    wait_for("serve a ready", Duration::from_secs(30), || ready(a_addr));
    let b = serve(&operator, b_addr, "lamps-b", &dir.join("b.log"));
    wait_for("serve b answering", Duration::from_secs(30), || {
        http_get(b_addr, "/healthz").is_some()
    });

    // The CRD controller: status, an owned child, cleanup through the finalizer.
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&lamp("desk", "amber")));
    assert_eq!(code, 0, "{out}{err}");
    wait_for("the lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"])
            .is_some_and(|l| l["status"]["shining"] == "amber")
    });
    let desk = json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"]).expect("lamp");
    assert_eq!(desk["metadata"]["finalizers"][0], "lamps.piceli.dev/lamp");
    assert_eq!(desk["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(
        desk["status"]["conditions"][0]["observedGeneration"],
        desk["metadata"]["generation"]
    );
    let child = json(
        &admin,
        &["-n", "lamps-system", "get", "configmap", "lamp-desk"],
    )
    .expect("the child ConfigMap");
    assert_eq!(child["data"]["color"], "amber");
    assert_eq!(child["metadata"]["ownerReferences"][0]["kind"], "Lamp");

    // The edge controller, cluster-wide on labelled ConfigMaps.
    ok(
        &admin,
        &[
            "-n",
            "team-a",
            "create",
            "configmap",
            "settings",
            "--from-literal=a=1",
        ],
    );
    ok(
        &admin,
        &[
            "-n",
            "team-a",
            "label",
            "configmap",
            "settings",
            "audit=yes",
        ],
    );
    wait_for("the audit Event", Duration::from_secs(30), || {
        json(&admin, &["-n", "team-a", "get", "events.events.k8s.io"]).is_some_and(|list| {
            list["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|e| e["reason"] == "Audited" && e["regarding"]["name"] == "settings")
            })
        })
    });

    // Exactly one process leads: a's metrics say so, b stands by (ready, not reconciling).
    let metrics = |addr| {
        http_get(addr, "/metrics")
            .map(|(_, b)| b)
            .unwrap_or_default()
    };
    assert_eq!(metric(&metrics(a_addr), "piceli_controller_leader "), 1.0);
    assert_eq!(metric(&metrics(b_addr), "piceli_controller_leader "), 0.0);

    // Hand-over: kill -9 the leader; b takes the Lease within its duration and reconciles.
    let mut a = a;
    a.kill().expect("kill -9 the leader");
    let _ = a.wait();
    wait_for("b to lead", Duration::from_secs(40), || {
        metric(&metrics(b_addr), "piceli_controller_leader ") == 1.0
    });
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&lamp("desk", "teal")));
    assert_eq!(code, 0, "{out}{err}");
    wait_for("the new leader's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"])
            .is_some_and(|l| l["status"]["shining"] == "teal")
    });

    // Deletion waits for the cleanup, which removes the child.
    ok(
        &admin,
        &[
            "-n",
            "lamps-system",
            "delete",
            "lamp",
            "desk",
            "--wait=false",
        ],
    );
    wait_for("the lamp to go", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"]).is_none()
    });
    assert!(
        json(
            &admin,
            &["-n", "lamps-system", "get", "configmap", "lamp-desk"]
        )
        .is_none()
    );

    assert!(stop(b).success(), "serve stops cleanly on SIGTERM");
    for log in ["a.log", "b.log"] {
        let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
        assert!(
            !text.contains("forbidden") && !text.contains("403"),
            "{log}: a request the rendered RBAC does not allow:\n{text}"
        );
    }
    let lease = json(
        &admin,
        &["-n", "lamps-system", "get", "lease", "lamps-controllers"],
    )
    .expect("the Lease");
    assert_ne!(
        lease["spec"]["holderIdentity"], "lamps-a",
        "released or taken over"
    );
}
