//! What RBAC adds to a write: server-side apply writes/s at concurrency 1 and 8 against a release
//! `piceli-sim serve --dir` process, as the admin (system:masters, no evaluation) and as a
//! ServiceAccount token (token verified, RBAC evaluated against the bootstrap policy plus 40 other
//! bindings), alternated in one run.
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

async fn apply_writes(api: &Api<ConfigMap>, concurrency: usize, total: usize, round: usize) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
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
    total as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let server = Server::start();
    let admin = server.client(None).await;
    let token = policy(&admin).await;
    let as_admin: Api<ConfigMap> = Api::default_namespaced(admin);
    let as_sa: Api<ConfigMap> = Api::default_namespaced(server.client(Some(&token)).await);
    apply_writes(&as_admin, 8, 500, 0).await;
    apply_writes(&as_sa, 8, 500, 1).await;
    let mut round = 2;
    for concurrency in [1usize, 8] {
        let total = 1_000 * concurrency.min(4);
        let (mut admin_rates, mut sa_rates) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            admin_rates.push(apply_writes(&as_admin, concurrency, total, round).await);
            sa_rates.push(apply_writes(&as_sa, concurrency, total, round + 1).await);
            round += 2;
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[1]
        };
        let (a, s) = (median(&mut admin_rates), median(&mut sa_rates));
        println!(
            "concurrency {concurrency}: admin {a:.0} writes/s, ServiceAccount (RBAC) {s:.0} writes/s — RBAC adds {:.1} % ({:.0} µs per write); medians of 3 alternated runs of {total}",
            (a / s - 1.0) * 100.0,
            (1.0 / s - 1.0 / a) * 1e6
        );
    }
}
