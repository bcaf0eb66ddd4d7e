//! What the probe tests share: the binaries with a poisoned HOME/KUBECONFIG, JSON lines, and tiny
//! loopback HTTP servers the local cluster's port forwards can be mapped to.

#![allow(dead_code)]

use assert_cmd::Command;
use piceli_sim::RunningSim;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;

/// The namespace every probe version deploys into.
pub const NAMESPACE: &str = "probe";
/// The label selector of the web pods.
pub const WEB: &str = "app.kubernetes.io/component=web";

/// A probe binary (`v1`, `v2`, `recheck`, `unready`, `kinds`) run in `dir` against `sim`, JSON output,
/// with HOME holding a poisoned ~/.kube/config and KUBECONFIG pointing at it.
pub fn probe(version: &str, dir: &Path, sim: &RunningSim) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    let exe = match version {
        "v1" => env!("CARGO_BIN_EXE_probe-v1"),
        "v2" => env!("CARGO_BIN_EXE_probe-v2"),
        "recheck" => env!("CARGO_BIN_EXE_probe-recheck"),
        "unready" => env!("CARGO_BIN_EXE_probe-unready"),
        "crash" => env!("CARGO_BIN_EXE_probe-crash"),
        "kinds" => env!("CARGO_BIN_EXE_probe-kinds"),
        other => panic!("no probe version {other}"),
    };
    let mut cmd = Command::new(exe);
    cmd.current_dir(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", home.join(".kube/config"))
        .args(["--kubeconfig", &sim.kubeconfig_path().display().to_string()])
        .args(["--context", "piceli-sim", "-o", "json", "--timeout", "20"])
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

/// Every stdout line as JSON.
pub fn lines(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The lines of one event kind.
pub fn events<'a>(lines: &'a [serde_json::Value], event: &str) -> Vec<&'a serde_json::Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

/// The final `result` line.
pub fn result(lines: &[serde_json::Value]) -> &serde_json::Value {
    let last = lines.last().expect("at least one line");
    assert_eq!(
        last["event"], "result",
        "the last line is the result: {lines:?}"
    );
    last
}

/// `deploy` without approval: exits 3 and prints the hash.
pub fn hash_to_approve(version: &str, dir: &Path, sim: &RunningSim) -> String {
    let out = probe(version, dir, sim).arg("deploy").assert().code(3);
    let lines = lines(&out);
    let result = result(&lines);
    assert_eq!(result["approval_required"], true);
    result["hash"].as_str().expect("hash").to_string()
}

/// A loopback HTTP server answering every request with `status` and `body` (threads, closes after each
/// response).
pub fn serve(status: u16, body: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(response.as_bytes());
            });
        }
    });
    addr
}

/// The image of the web Deployment as the cluster holds it.
pub fn live_image(sim: &RunningSim) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = sim.client().expect("client");
        let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
            kube::Api::namespaced(client, NAMESPACE);
        let d = api.get("web").await.expect("Deployment web");
        d.spec
            .and_then(|s| s.template.spec)
            .and_then(|s| s.containers.into_iter().next())
            .and_then(|c| c.image)
            .expect("an image")
    })
}
