//! Throughput benchmark of a simulator process (release `piceli-sim serve --dir`, SQLite in WAL
//! mode) driven by the kube 5 client: server-side apply writes/s at concurrency 1 and 8, listing
//! 10,000 ConfigMaps, watch fan-out to 10 watchers, the server's memory with 10,000 ConfigMaps, and
//! the time from applying 100 Deployments to all of them being Available (simulated controllers).
//!
//! Run: `cargo bench -p piceli-sim --bench throughput`

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::json;

fn configmap(name: &str, generation: usize) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "yes", "app": "demo"}},
        "data": {"generation": generation.to_string(), "a": "alpha", "b": "bravo", "c": "charlie", "d": "delta"},
    }))
    .expect("configmap")
}

struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let child = Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
            .args(["serve", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start piceli-sim serve");
        let pid_file = dir.path().join("sim.pid");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !pid_file.exists() {
            assert!(Instant::now() < deadline, "server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, dir }
    }

    async fn client(&self) -> kube::Client {
        let yaml = std::fs::read_to_string(self.dir.path().join("kubeconfig")).expect("kubeconfig");
        let kc = kube::config::Kubeconfig::from_yaml(&yaml).expect("parse kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(config).expect("client")
    }

    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let kb: f64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        kb / 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn apply_writes(
    api: &Api<ConfigMap>,
    concurrency: usize,
    total: usize,
    names: usize,
    round: usize,
) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let api = api.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let pp = PatchParams::apply("bench");
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let name = format!("cm-{}", i % names);
                api.patch(
                    &name,
                    &pp,
                    &Patch::Apply(configmap(&name, round * total + i)),
                )
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
    let client = server.client().await;
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    println!("rss after start: {:.1} MiB", server.rss_mib());

    // Warm up (connection pool, SQLite pages).
    apply_writes(&api, 8, 500, 500, 0).await;
    let c1 = apply_writes(&api, 1, 2_000, 2_000, 1).await;
    println!(
        "server-side apply, concurrency 1: {c1:.0} writes/s (2,000 applies, each changes the object)"
    );
    let c8 = apply_writes(&api, 8, 8_000, 8_000, 2).await;
    println!(
        "server-side apply, concurrency 8: {c8:.0} writes/s (8,000 applies, each changes the object)"
    );

    println!("rss after the write runs: {:.1} MiB", server.rss_mib());
    // Fill to 10,000 objects.
    apply_writes(&api, 8, 10_000, 10_000, 3).await;
    println!(
        "rss with 10,000 ConfigMaps stored, before any list: {:.1} MiB",
        server.rss_mib()
    );
    // The namespace also holds the `kube-root-ca.crt` the controllers publish, as a real cluster's does.
    let written = |items: &[ConfigMap]| {
        items
            .iter()
            .filter(|c| c.metadata.name.as_deref() != Some("kube-root-ca.crt"))
            .count()
    };
    let count = written(&api.list(&ListParams::default()).await.expect("list").items);
    assert_eq!(count, 10_000);
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let l = api.list(&ListParams::default()).await.expect("list");
        assert_eq!(written(&l.items), 10_000);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "list of 10,000 ConfigMaps (one request, decoded by kube): median {:.0} ms, min {:.0} ms",
        times[2], times[0]
    );
    let mut paged = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let mut n = 0;
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(500);
            if let Some(c) = &token {
                lp = lp.continue_token(c);
            }
            let page = api.list(&lp).await.expect("page");
            n += written(&page.items);
            token = page.metadata.continue_.clone();
            if token.is_none() {
                break;
            }
        }
        assert_eq!(n, 10_000);
        paged.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    paged.sort_by(f64::total_cmp);
    println!(
        "list of 10,000 ConfigMaps in pages of 500: median {:.0} ms",
        paged[1]
    );
    println!(
        "rss with 10,000 ConfigMaps stored: {:.1} MiB",
        server.rss_mib()
    );

    // Watch fan-out: 10 watchers, 1,000 changes.
    let changes = 1_000;
    let seen = Arc::new(AtomicUsize::new(0));
    let mut watchers = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(10);
    for _ in 0..10 {
        let api = api.clone();
        let seen = seen.clone();
        let ready = ready_tx.clone();
        watchers.push(tokio::spawn(async move {
            let mut stream = watcher(api, watcher::Config::default().labels("bench=yes")).boxed();
            let mut got = 0;
            while let Some(ev) = stream.try_next().await.expect("watch") {
                match ev {
                    watcher::Event::InitDone => {
                        let _ = ready.send(()).await;
                    }
                    watcher::Event::Apply(_) => {
                        got += 1;
                        seen.fetch_add(1, Ordering::Relaxed);
                        if got == changes {
                            return;
                        }
                    }
                    _ => {}
                }
            }
        }));
    }
    for _ in 0..10 {
        ready_rx.recv().await.expect("watcher ready");
    }
    let t = Instant::now();
    apply_writes(&api, 8, changes, changes, 4).await;
    let writes_done = t.elapsed();
    for w in watchers {
        tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .expect("watchers finish")
            .expect("watcher task");
    }
    let all = t.elapsed();
    println!(
        "watch fan-out: 1,000 changes to 10 watchers ({} events delivered) in {:.0} ms (writes took {:.0} ms): {:.0} events/s",
        seen.load(Ordering::Relaxed),
        all.as_secs_f64() * 1000.0,
        writes_done.as_secs_f64() * 1000.0,
        seen.load(Ordering::Relaxed) as f64 / all.as_secs_f64()
    );
    println!("rss after the watch run: {:.1} MiB", server.rss_mib());

    // Rollouts: 100 Deployments of 2 replicas, from the first apply to all Available and complete.
    let deploys: Api<k8s_openapi::api::apps::v1::Deployment> = Api::default_namespaced(client);
    let t = Instant::now();
    let pp = PatchParams::apply("bench");
    for i in 0..100 {
        let name = format!("app-{i}");
        let d: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}
        }))
        .expect("deployment");
        deploys
            .patch(&name, &pp, &Patch::Apply(d))
            .await
            .expect("apply deployment");
    }
    let applied = t.elapsed();
    loop {
        let list = deploys.list(&ListParams::default()).await.expect("list");
        let done = list
            .items
            .iter()
            .filter(|d| {
                kube::runtime::wait::Condition::matches_object(
                    &kube::runtime::wait::conditions::is_deployment_completed(),
                    Some(*d),
                )
            })
            .count();
        if done == 100 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(300),
            "rollouts did not finish ({done}/100)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "100 Deployments (2 replicas each): applied in {:.0} ms, all Available and complete after {:.0} ms",
        applied.as_secs_f64() * 1000.0,
        t.elapsed().as_secs_f64() * 1000.0
    );
    println!("rss at the end: {:.1} MiB", server.rss_mib());
}
