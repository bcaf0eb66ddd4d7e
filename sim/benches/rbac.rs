//! What RBAC adds to a write: server-side apply writes/s at concurrency 1 and 8 against a release
//! `piceli-sim serve --dir` process, as the admin (system:masters, no evaluation) and as a
//! ServiceAccount token (token verified, RBAC evaluated against the bootstrap policy plus 40 other
//! bindings), alternated in one run (who goes first alternating too), the median of five runs each;
//! also the server process's CPU time per write (/proc/PID/stat), steadier than the rates at concurrency 1.
//!
//! Run: `cargo bench -p piceli-sim --bench rbac`

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let child = Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
            .args(["serve", "--no-controllers", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start piceli-sim serve");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !dir.path().join("sim.pid").exists() {
            assert!(Instant::now() < deadline, "server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, dir }
    }

    async fn client(&self, token: Option<&str>) -> kube::Client {
        let mut yaml =
            std::fs::read_to_string(self.dir.path().join("kubeconfig")).expect("kubeconfig");
        if let Some(token) = token {
            let admin = yaml
                .lines()
                .find_map(|l| l.trim().strip_prefix("token:"))
                .expect("admin token")
                .trim()
                .to_string();
            yaml = yaml.replace(&admin, token);
        }
        let kc = kube::config::Kubeconfig::from_yaml(&yaml).expect("parse kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(config).expect("client")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("object")
}

/// A ServiceAccount `writer` allowed to apply ConfigMaps in `default`, amid other bindings.
async fn policy(admin: &kube::Client) -> String {
    let pp = PostParams::default();
    let sas: Api<ServiceAccount> = Api::default_namespaced(admin.clone());
    sas.create(&pp, &from(json!({"metadata": {"name": "writer"}})))
        .await
        .expect("sa");
    let roles: Api<Role> = Api::default_namespaced(admin.clone());
    roles
        .create(&pp, &from(json!({"metadata": {"name": "cm-writer"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create", "update", "patch"]}]})))
        .await
        .expect("role");
    let rbs: Api<RoleBinding> = Api::default_namespaced(admin.clone());
    let crbs: Api<ClusterRoleBinding> = Api::all(admin.clone());
    for i in 0..20 {
        let subject = json!([{"kind": "ServiceAccount", "name": format!("other-{i}"), "namespace": "default"}]);
        rbs.create(&pp, &from(json!({"metadata": {"name": format!("other-{i}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"}, "subjects": subject})))
            .await
            .expect("rolebinding");
        crbs.create(&pp, &from(json!({"metadata": {"name": format!("other-{i}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:discovery"}, "subjects": subject})))
            .await
            .expect("clusterrolebinding");
    }
    rbs.create(
        &pp,
        &from(json!({"metadata": {"name": "writer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "writer", "namespace": "default"}]})),
    )
    .await
    .expect("rolebinding");
    let req: TokenRequest = from(json!({"spec": {"audiences": [], "expirationSeconds": 3600}}));
    let out = sas
        .create_token_request("writer", &pp, &req)
        .await
        .expect("token");
    out.status.expect("status").token
}

/// The CPU time (user + system) the process `pid` has used so far, in seconds (Linux: /proc/PID/stat).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // The fields after the command name (which is in parentheses and may hold spaces).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .expect("stat fields");
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

/// One run of `total` applies: writes per second, and the server's CPU time per write (µs).
async fn apply_writes(
    api: &Api<ConfigMap>,
    server: u32,
    concurrency: usize,
    total: usize,
    round: usize,
) -> (f64, f64) {
    let next = Arc::new(AtomicUsize::new(0));
    let cpu_before = cpu_seconds(server);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (api, next) = (api.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let pp = PatchParams::apply("bench");
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let name = format!("cm-{}", i % 500);
                let cm: ConfigMap = from(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name}, "data": {"n": (round * total + i).to_string()}}));
                api.patch(&name, &pp, &Patch::Apply(cm))
                    .await
                    .expect("apply");
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let rate = total as f64 / start.elapsed().as_secs_f64();
    let cpu = (cpu_seconds(server) - cpu_before) / total as f64 * 1e6;
    (rate, cpu)
}

/// Runs per side and concurrency (odd: the median is one run's).
const RUNS: usize = 5;

#[tokio::main]
async fn main() {
    let server = Server::start();
    let pid = server.child.id();
    let admin = server.client(None).await;
    let token = policy(&admin).await;
    let as_admin: Api<ConfigMap> = Api::default_namespaced(admin);
    let as_sa: Api<ConfigMap> = Api::default_namespaced(server.client(Some(&token)).await);
    apply_writes(&as_admin, pid, 8, 500, 0).await;
    apply_writes(&as_sa, pid, 8, 500, 1).await;
    let mut round = 2;
    for concurrency in [1usize, 8] {
        let total = 1_000 * concurrency.min(4);
        let (mut admin_runs, mut sa_runs) = (Vec::new(), Vec::new());
        for run in 0..RUNS {
            // Who goes first alternates, so neither side always meets the other's leftovers (a WAL
            // to checkpoint, warm caches).
            if run % 2 == 0 {
                admin_runs.push(apply_writes(&as_admin, pid, concurrency, total, round).await);
                sa_runs.push(apply_writes(&as_sa, pid, concurrency, total, round + 1).await);
            } else {
                sa_runs.push(apply_writes(&as_sa, pid, concurrency, total, round).await);
                admin_runs.push(apply_writes(&as_admin, pid, concurrency, total, round + 1).await);
            }
            round += 2;
        }
        let median = |runs: &[(f64, f64)], pick: fn(&(f64, f64)) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(pick).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (a, s) = (median(&admin_runs, |r| r.0), median(&sa_runs, |r| r.0));
        let (ac, sc) = (median(&admin_runs, |r| r.1), median(&sa_runs, |r| r.1));
        println!(
            "concurrency {concurrency}: admin {a:.0} writes/s, ServiceAccount (RBAC) {s:.0} writes/s — RBAC adds {:.1} % ({:.0} µs per write); server CPU per write: admin {ac:.0} µs, ServiceAccount {sc:.0} µs ({:+.1} %); medians of {RUNS} alternated runs of {total}",
            (a / s - 1.0) * 100.0,
            (1.0 / s - 1.0 / a) * 1e6,
            (sc / ac - 1.0) * 100.0,
        );
    }
}
