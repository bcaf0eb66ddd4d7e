//! Benchmark driver for `piceli::controller` against a running cluster (the local one: `piceli-sim serve`).
//!
//! - `latency KUBECONFIG COUNT`: an edge controller on ConfigMaps of a fresh namespace; COUNT ConfigMaps
//!   created as fast as kube can (16 requests in flight); prints the create→`on_create` latency p50/p99
//!   (from just before each POST) and the events handled per second.
//! - `seed KUBECONFIG NAMESPACE COUNT`: creates COUNT ConfigMaps (32 in flight).
//! - `sync KUBECONFIG NAMESPACE COUNT`: a level controller on the namespace; prints the time until COUNT
//!   objects were listed and reconciled once, and this process's peak RSS (VmHWM).
//! - `handle`, `drive-latency`, `drive-sync`: the comparison with knete and kopf, the handler in a
//!   process of its own; `drive-pair`: the floor and piceli timed on the same creations at once (see
//!   `external.rs` and benches/scripts/controller-compare.sh).

mod external;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ObjectMeta, PostParams};
use piceli_runtime::controller::{
    Action, Context, Controller, ControllerOptions, Controllers, RunOptions,
};

type Seen = Arc<Mutex<HashMap<String, Instant>>>;

struct Timing(Seen);

impl Controller<ConfigMap> for Timing {
    type Error = std::convert::Infallible;
    async fn on_create(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), Self::Error> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        if let Ok(mut seen) = self.0.lock() {
            seen.entry(name).or_insert_with(Instant::now);
        }
        Ok(())
    }
}

async fn client(kubeconfig: &str) -> Result<kube::Client, String> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| e.to_string())?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| e.to_string())?;
    kube::Client::try_from(config).map_err(|e| e.to_string())
}

fn configmap(name: String) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_string(), "v".to_string())].into()),
        ..ConfigMap::default()
    }
}

async fn namespace(client: &kube::Client, name: &str) -> Result<(), String> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Creates `count` ConfigMaps `prefix-N`, `parallel` at a time; the instant before each POST.
async fn create(
    api: &Api<ConfigMap>,
    prefix: &str,
    count: usize,
    parallel: usize,
) -> HashMap<String, Instant> {
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let name = format!("{prefix}-{i}");
            async move {
                let sent = Instant::now();
                if let Err(e) = api
                    .create(&PostParams::default(), &configmap(name.clone()))
                    .await
                {
                    eprintln!("create {name}: {e}");
                }
                (name, sent)
            }
        })
        .buffer_unordered(parallel)
        .collect()
        .await
}

/// Like [`create`], stamped with the wall clock (compared with other processes' clocks).
async fn create_stamped(
    api: &Api<ConfigMap>,
    prefix: &str,
    count: usize,
    parallel: usize,
) -> Vec<(String, std::time::SystemTime)> {
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let name = format!("{prefix}-{i}");
            async move {
                let sent = std::time::SystemTime::now();
                if let Err(e) = api
                    .create(&PostParams::default(), &configmap(name.clone()))
                    .await
                {
                    eprintln!("create {name}: {e}");
                }
                (name, sent)
            }
        })
        .buffer_unordered(parallel)
        .collect()
        .await
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn run_options() -> RunOptions {
    RunOptions {
        operator_namespace: "default".into(),
        identity: "bench".into(),
        leader: None,
    }
}

async fn latency(kubeconfig: &str, count: usize) -> Result<(), String> {
    let client = client(kubeconfig).await?;
    let ns = format!("bench-latency-{}", std::process::id());
    namespace(&client, &ns).await?;
    let seen: Seen = Arc::default();
    let controllers = Controllers::new("bench").edge(
        "timing",
        ControllerOptions::default().namespaces([ns.clone()]),
        Timing(seen.clone()),
    );
    let metrics = controllers.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controllers.run(client.clone(), run_options(), async move {
        let _ = stopped.await;
    }));
    while !metrics.ready() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    let began = Instant::now();
    let sent = create(&api, "cm", count, 16).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.lock().map(|m| m.len()).unwrap_or(0) < count && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let seen = seen.lock().map(|m| m.clone()).unwrap_or_default();
    let mut latencies: Vec<Duration> = sent
        .iter()
        .filter_map(|(name, at)| seen.get(name).map(|h| h.saturating_duration_since(*at)))
        .collect();
    latencies.sort();
    let last = seen.values().max().copied().unwrap_or(began);
    let elapsed = last.saturating_duration_since(began).as_secs_f64();
    println!(
        "latency: {count} ConfigMaps, {} handled; create→on_create p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         {:.0} events/s ({elapsed:.2} s from the first create to the last handler)",
        latencies.len(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        latencies.len() as f64 / elapsed.max(1e-9),
    );
    let _ = stop.send(());
    let _ = running.await;
    Ok(())
}

async fn seed(kubeconfig: &str, ns: &str, count: usize) -> Result<(), String> {
    let client = client(kubeconfig).await?;
    namespace(&client, ns).await?;
    let began = Instant::now();
    create(&Api::namespaced(client, ns), "seed", count, 32).await;
    println!(
        "seeded {count} ConfigMaps in {:.2} s",
        began.elapsed().as_secs_f64()
    );
    Ok(())
}

async fn sync(kubeconfig: &str, ns: &str, count: usize) -> Result<(), String> {
    let began = Instant::now();
    let client = client(kubeconfig).await?;
    let reconciled = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = reconciled.clone();
    let controllers = Controllers::new("bench").reconcile(
        "sync",
        ControllerOptions::default().namespaces([ns.to_string()]),
        move |_cm: Arc<ConfigMap>, _cx: Context| {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async { Ok::<_, std::convert::Infallible>(Action::await_change()) }
        },
    );
    let metrics = controllers.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controllers.run(client, run_options(), async move {
        let _ = stopped.await;
    }));
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut synced_at = None;
    while reconciled.load(std::sync::atomic::Ordering::Relaxed) < count && Instant::now() < deadline
    {
        if synced_at.is_none() && metrics.ready() {
            synced_at = Some(began.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let done = began.elapsed();
    println!(
        "sync: {} of {count} ConfigMaps reconciled once in {:.2} s (cache synced after {:.2} s); peak RSS {:.1} MiB",
        reconciled.load(std::sync::atomic::Ordering::Relaxed),
        done.as_secs_f64(),
        synced_at.unwrap_or(done).as_secs_f64(),
        peak_rss_mib(),
    );
    let _ = stop.send(());
    let _ = running.await;
    Ok(())
}

fn main() -> ExitCode {
    piceli_net::tls::install_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let number = |s: Option<&String>| s.and_then(|n| n.parse::<usize>().ok());
    let result = runtime.block_on(async {
        let (head, cmd) = match args.iter().position(|a| a == "--") {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (&args[..], &args[..0]),
        };
        match head.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["handle", kc, ns, out] => external::handle(kc, ns, out).await,
            ["handle-raw", kc, ns, out] => external::handle_raw(kc, ns, out).await,
            ["drive-latency", kc, ns, n, out, label] => {
                let n = number(Some(&n.to_string())).ok_or("COUNT")?;
                external::latency(kc, ns, n, out, label, cmd).await
            }
            ["drive-pair", kc, ns, n, prefix] => {
                let n = number(Some(&n.to_string())).ok_or("COUNT")?;
                external::pair(kc, ns, n, prefix).await
            }
            ["drive-sync", kc, ns, n, out, label] => {
                let n = number(Some(&n.to_string())).ok_or("COUNT")?;
                external::sync(kc, ns, n, out, label, cmd).await
            }
            ["latency", kc, n] => latency(kc, number(Some(&n.to_string())).ok_or("COUNT")?).await,
            ["seed", kc, ns, n] => seed(kc, ns, number(Some(&n.to_string())).ok_or("COUNT")?).await,
            ["sync", kc, ns, n] => sync(kc, ns, number(Some(&n.to_string())).ok_or("COUNT")?).await,
            _ => Err("usage: controller-bench latency KUBECONFIG COUNT | seed KUBECONFIG NS COUNT | sync KUBECONFIG NS COUNT \
                      | handle KUBECONFIG NS OUT | handle-raw KUBECONFIG NS OUT | drive-latency KUBECONFIG NS COUNT OUT LABEL -- CMD… | drive-pair KUBECONFIG NS COUNT OUT_PREFIX | drive-sync KUBECONFIG NS COUNT OUT LABEL -- CMD…".into()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
