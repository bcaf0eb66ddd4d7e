//! A background `piceli-sim start` server for the suites that watch its process from outside
//! (`memory::`, `load_faults::`): the command, its pid, a field of its /proc status, a client.

use std::path::Path;
use std::process::Command;

/// The server's command: `piceli-sim ARGS`, or `piceli sim ARGS` with `PICELI_LOAD_PICELI` (the release
/// binary `benches/scripts/sim-load.sh` passes).
pub fn sim_cmd(args: &[&str]) -> std::process::Output {
    let mut cmd = match std::env::var("PICELI_LOAD_PICELI") {
        Ok(piceli) => {
            let mut c = Command::new(piceli);
            c.arg("sim");
            c
        }
        Err(_) => Command::new(env!("CARGO_BIN_EXE_piceli-sim")),
    };
    cmd.args(args).output().expect("run the local cluster")
}

/// Starts the server in `dir` (`start --dir DIR`) and gives its pid.
pub fn start(dir: &Path) -> u32 {
    let d = dir.to_str().expect("utf-8 path");
    let started = sim_cmd(&["start", "--dir", d]);
    assert!(started.status.success(), "{started:?}");
    std::fs::read_to_string(dir.join("sim.pid"))
        .expect("sim.pid")
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .expect("pid")
}

/// A field of /proc/PID/status in kB (`VmRSS`, `VmHWM`).
pub fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a /proc/PID/status field")
}

/// A client from the server's kubeconfig in `dir`.
pub async fn client(dir: &Path) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(dir.join("kubeconfig")).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("client config");
    kube::Client::try_from(config).expect("client")
}
