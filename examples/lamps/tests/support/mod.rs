//! What the lamps end-to-end tests share: the real kubectl (explicit kubeconfig, own discovery cache),
//! polling, loopback HTTP to `serve`'s health port, starting and stopping `lamps serve`, and deploying
//! the app with `plan` + `apply` to get a kubeconfig holding only the operator ServiceAccount's token.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use piceli_test_support::Cluster;
use serde_json::Value;

/// The real kubectl (see `piceli_test_support::kubectl`), with `stdin` piped in when given.
pub fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    piceli_test_support::kubectl::run(kubeconfig, None, args, stdin).parts()
}

pub use piceli_test_support::kubectl::{json, ok};

/// Polls `check` until it holds, for at most `within`.
pub fn wait_for(what: &str, within: Duration, check: impl FnMut() -> bool) {
    piceli_test_support::process::wait_until(what, within, check);
}

pub use piceli_test_support::process::free_port;

/// A plain HTTP/1.1 GET on loopback: (status, body).
pub fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
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

pub fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// `lamps serve` with the ServiceAccount's kubeconfig (from [`token_kubeconfig`], its current context), as
/// pod `name`; its stderr goes to `log`.
pub fn serve(kubeconfig: &Path, addr: SocketAddr, name: &str, log: &Path) -> Child {
    serve_with(kubeconfig, addr, name, log, &[])
}

/// [`serve`] with more arguments (`--log-format json`), RUST_LOG unset.
pub fn serve_with(
    kubeconfig: &Path,
    addr: SocketAddr,
    name: &str,
    log: &Path,
    extra: &[&str],
) -> Child {
    let log = std::fs::File::create(log).expect("log file");
    let text = std::fs::read_to_string(kubeconfig).expect("the operator's kubeconfig");
    let config: Value = serde_json::from_str(&text).expect("kubeconfig JSON");
    let context = config["current-context"].as_str().expect("current-context");
    Command::cargo_bin("lamps")
        .expect("lamps binary")
        .args(["serve", "--listen", &addr.to_string(), "--context", context])
        .args(extra)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("POD_NAME", name)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("lamps serve starts")
}

/// SIGTERM, then the exit status (graceful shutdown exits 0).
pub fn stop(child: Child) -> std::process::ExitStatus {
    piceli_test_support::process::stop(child, "lamps serve")
}

pub fn lamp(name: &str, color: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Lamp\nmetadata: {{name: {name}, namespace: lamps-system}}\nspec: {{color: {color}}}\n"
    )
}

/// The cluster's kubeconfig (its context only, certificates inline) with `token` as its one credential.
pub fn token_kubeconfig(cluster: &Cluster, token: &str) -> String {
    let raw = ok(
        cluster.kubeconfig_path(),
        &[
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "--context",
            cluster.context(),
            "-o",
            "json",
        ],
    );
    let mut config: Value = serde_json::from_str(&raw).expect("kubeconfig JSON");
    for user in config["users"].as_array_mut().expect("users") {
        user["user"] = serde_json::json!({ "token": token });
    }
    config["current-context"] = cluster.context().into();
    serde_json::to_string_pretty(&config).expect("kubeconfig")
}

/// Deploys the app with `plan` + `apply --approve` and writes a kubeconfig holding only the operator
/// ServiceAccount's token.
pub fn deploy(cluster: &Cluster, dir: &Path) -> std::path::PathBuf {
    let kc = cluster.kubeconfig_path().display().to_string();
    let flags = [
        "--kubeconfig",
        &kc,
        "--context",
        cluster.context(),
        "-o",
        "json",
    ];
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
        "{}{}",
        String::from_utf8_lossy(&planned.stdout),
        String::from_utf8_lossy(&planned.stderr)
    );
    let plan: Value = serde_json::from_slice(&planned.stdout).expect("plan JSON");
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let kinds: Vec<&str> = plan["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["kind"].as_str())
        .collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind);
    assert!(
        at("CustomResourceDefinition").is_some() && at("CustomResourceDefinition") < at("Lamp"),
        "the CRD is applied before the Lamp the app ships with, in one plan on a fresh cluster: {kinds:?}"
    );
    let applied = lamps(&["apply", "--approve", &hash, "--timeout", "0"]);
    assert!(
        applied.status.success(),
        "{}{}",
        String::from_utf8_lossy(&applied.stdout),
        String::from_utf8_lossy(&applied.stderr)
    );
    let admin = cluster.kubeconfig_path();
    for object in ["serviceaccount/lamps", "role/lamps", "rolebinding/lamps"] {
        ok(admin, &["-n", "lamps-system", "get", object]);
    }
    ok(admin, &["get", "crd/lamps.example.com"]);
    ok(admin, &["-n", "lamps-system", "get", "lamp", "hall"]);
    ok(admin, &["get", "clusterrole/lamps-system-lamps"]);
    // kube-apiserver publishes a new CRD's schema a moment after it serves the kind.
    wait_for(
        "the lamps schema published",
        Duration::from_secs(30),
        || kubectl(admin, &["explain", "lamps.spec"], None).0 == 0,
    );
    let explained = ok(admin, &["explain", "lamps.spec"]);
    assert!(
        explained.contains("color"),
        "kubectl explain shows the schema: {explained}"
    );
    let token = ok(admin, &["-n", "lamps-system", "create", "token", "lamps"]);
    let path = dir.join("operator.kubeconfig");
    std::fs::write(&path, token_kubeconfig(cluster, token.trim())).expect("write kubeconfig");
    let (code, _, _) = kubectl(&path, &["-n", "lamps-system", "get", "secrets"], None);
    assert_ne!(code, 0, "the operator's token is not an admin's");
    // kube-apiserver's RBAC authorizer reads roles and bindings through informers: a binding just written
    // takes a moment to allow anything. Wait for it (as a Pod's restarts would), so a 403 in serve's log
    // means a rule the render missed, not a binding still on its way.
    wait_for(
        "the operator's RBAC in effect",
        Duration::from_secs(30),
        || {
            [
                &["-n", "lamps-system", "get", "leases.coordination.k8s.io"][..],
                &["-n", "lamps-system", "watch", "lamps.example.com"][..],
                &["--all-namespaces", "watch", "configmaps"][..],
            ]
            .iter()
            .all(|args| {
                let can_i: Vec<&str> = ["auth", "can-i"]
                    .iter()
                    .chain(args.iter())
                    .copied()
                    .collect();
                kubectl(&path, &can_i, None).0 == 0
            })
        },
    );
    path
}
