//! The side-by-side comparison: the same handler (on create of a ConfigMap, append `NAME UNIX_NS` to a
//! file) run as a separate process by piceli (`handle`), knete or kopf (benches/scripts/controller_*.py),
//! measured by one driver: `drive-latency` creates COUNT ConfigMaps after a warm-up object was handled
//! and reads the handler's wall-clock times against the instant before each POST; `drive-sync` starts
//! the handler on a namespace already holding COUNT ConfigMaps and times it until every one was handled,
//! with the handler process's peak RSS (VmHWM); `drive-pair` runs the floor's and piceli's handlers at once
//! on one namespace and times the same creations against both.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use piceli_runtime::controller::{Context, Controller, ControllerOptions, Controllers};

fn unix_ns(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// piceli's handler: one line per created ConfigMap.
struct Record(Arc<Mutex<std::fs::File>>);

impl Controller<ConfigMap> for Record {
    type Error = std::io::Error;
    async fn on_create(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), Self::Error> {
        let at = unix_ns(SystemTime::now());
        let name = cm.metadata.name.as_deref().unwrap_or_default();
        let mut out = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        writeln!(out, "{name} {at}")
    }
}

/// `handle KUBECONFIG NS OUT`: runs piceli's handler until killed.
pub async fn handle(kubeconfig: &str, ns: &str, out: &str) -> Result<(), String> {
    let client = super::client(kubeconfig).await?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(|e| format!("{out}: {e}"))?;
    let controllers = Controllers::new("bench").edge(
        "record",
        ControllerOptions::default().namespaces([ns.to_string()]),
        Record(Arc::new(Mutex::new(file))),
    );
    controllers
        .run(client, super::run_options(), std::future::pending())
        .await
        .map_err(|e| e.to_string())
}

/// `handle-raw KUBECONFIG NS OUT`: the floor under every framework — kube's bare watcher (no cache, no
/// controller, no queue) appending the same line for each ConfigMap the first time it sees it. What a
/// framework adds over this is its own; what this takes is the API server's, the creator's and the
/// machine's.
pub async fn handle_raw(kubeconfig: &str, ns: &str, out: &str) -> Result<(), String> {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let client = super::client(kubeconfig).await?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(|e| format!("{out}: {e}"))?;
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    let mut seen = std::collections::HashSet::new();
    let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).applied_objects());
    while let Some(event) = events.next().await {
        let Ok(cm) = event else { continue };
        let name = cm.metadata.name.clone().unwrap_or_default();
        if seen.insert(name.clone()) {
            let at = unix_ns(SystemTime::now());
            writeln!(file, "{name} {at}").map_err(|e| format!("{out}: {e}"))?;
        }
    }
    Ok(())
}

/// The handled lines so far: name → wall-clock ns.
fn handled(out: &str) -> HashMap<String, u128> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (name, at) = l.split_once(' ')?;
            Some((name.to_string(), at.trim().parse().ok()?))
        })
        .collect()
}

fn spawn(cmd: &[String], kubeconfig: &str, ns: &str, out: &str) -> Result<Child, String> {
    let (program, args) = cmd.split_first().ok_or("no handler command after --")?;
    Command::new(program)
        .args(args)
        .env("BENCH_KUBECONFIG", kubeconfig)
        .env("BENCH_NS", ns)
        .env("BENCH_OUT", out)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))
}

fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

async fn wait_for(out: &str, names: impl Fn(&HashMap<String, u128>) -> bool, within: Duration) {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline && !names(&handled(out)) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `drive-latency KUBECONFIG NS COUNT OUT LABEL -- CMD…`.
pub async fn latency(
    kubeconfig: &str,
    ns: &str,
    count: usize,
    out: &str,
    label: &str,
    cmd: &[String],
) -> Result<(), String> {
    let client = super::client(kubeconfig).await?;
    super::namespace(&client, ns).await?;
    let _ = std::fs::remove_file(out);
    let mut child = spawn(cmd, kubeconfig, ns, out)?;
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    // Warm-up: the handler is watching once it handled this one.
    let warm = Instant::now();
    loop {
        let _ = api
            .create(&PostParams::default(), &super::configmap("warmup".into()))
            .await;
        wait_for(out, |h| h.contains_key("warmup"), Duration::from_secs(2)).await;
        if handled(out).contains_key("warmup") || warm.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    let began = SystemTime::now();
    let sent: Vec<(String, SystemTime)> = super::create_stamped(&api, "cm", count, 16).await;
    wait_for(
        out,
        |h| sent.iter().all(|(n, _)| h.contains_key(n)),
        Duration::from_secs(300),
    )
    .await;
    let rss = peak_rss_mib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    report(label, count, began, &sent, out, rss);
    Ok(())
}

/// Prints a latency run's line (p50, p99, max, rate, RSS) for the handler that wrote `out`; the p99.
fn report(
    label: &str,
    count: usize,
    began: SystemTime,
    sent: &[(String, SystemTime)],
    out: &str,
    rss: f64,
) -> Duration {
    let seen = handled(out);
    let mut latencies: Vec<Duration> = sent
        .iter()
        .filter_map(|(n, at)| {
            let h = *seen.get(n)?;
            let at = unix_ns(*at);
            Some(Duration::from_nanos(
                u64::try_from(h.saturating_sub(at)).unwrap_or(u64::MAX),
            ))
        })
        .collect();
    latencies.sort();
    let last = sent.iter().filter_map(|(n, _)| seen.get(n)).max().copied();
    let elapsed = last.map_or(0.0, |l| l.saturating_sub(unix_ns(began)) as f64 / 1e9);
    let p99 = super::percentile(&latencies, 0.99);
    println!(
        "{}: {count} ConfigMaps, {} handled; create→handler p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         {:.0} events/s ({elapsed:.2} s from the first create to the last handler); peak RSS {rss:.1} MiB",
        label,
        latencies.len(),
        super::percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        latencies.len() as f64 / elapsed.max(1e-9),
    );
    p99
}

/// `drive-pair KUBECONFIG NS COUNT OUT_PREFIX`: the floor (`handle-raw`) and piceli (`handle`) watch one
/// namespace at once, each in its own process, and the same COUNT creations are timed against both — the
/// p99 ratio of one run, with the API server's queueing and the machine's scheduling shared by the two
/// (run one after the other, the floor's own p99 moves 20–75 ms between runs on two cores).
pub async fn pair(kubeconfig: &str, ns: &str, count: usize, prefix: &str) -> Result<(), String> {
    let client = super::client(kubeconfig).await?;
    super::namespace(&client, ns).await?;
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let exe = exe.to_string_lossy().into_owned();
    let sides = [("floor", "handle-raw"), ("piceli", "handle")];
    let mut children = Vec::new();
    for (label, mode) in sides {
        let out = format!("{prefix}-{label}.out");
        let _ = std::fs::remove_file(&out);
        let cmd = [
            exe.clone(),
            mode.into(),
            kubeconfig.into(),
            ns.into(),
            out.clone(),
        ];
        match spawn(&cmd, kubeconfig, ns, &out) {
            Ok(child) => children.push((label, out, child)),
            Err(e) => {
                // Stop the side already started: nothing outlives the run.
                for (_, _, mut child) in children {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(e);
            }
        }
    }
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    let warm = Instant::now();
    let all_warm = |children: &[(&str, String, Child)]| {
        children
            .iter()
            .all(|(_, out, _)| handled(out).contains_key("warmup"))
    };
    while !all_warm(&children) && warm.elapsed() < Duration::from_secs(120) {
        let _ = api
            .create(&PostParams::default(), &super::configmap("warmup".into()))
            .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let began = SystemTime::now();
    let sent: Vec<(String, SystemTime)> = super::create_stamped(&api, "cm", count, 16).await;
    for (_, out, _) in &children {
        wait_for(
            out,
            |h| sent.iter().all(|(n, _)| h.contains_key(n)),
            Duration::from_secs(300),
        )
        .await;
    }
    let mut p99s = Vec::new();
    for (label, out, mut child) in children {
        let rss = peak_rss_mib(child.id());
        let _ = child.kill();
        let _ = child.wait();
        p99s.push(report(label, count, began, &sent, &out, rss));
    }
    if let [floor, piceli] = p99s.as_slice() {
        println!(
            "pair: piceli p99 ÷ floor p99 = {:.2}× (one run, both watching)",
            piceli.as_secs_f64() / floor.as_secs_f64().max(1e-9)
        );
    }
    Ok(())
}

/// `drive-sync KUBECONFIG NS COUNT OUT LABEL -- CMD…` (NS seeded with `seed` first).
pub async fn sync(
    kubeconfig: &str,
    ns: &str,
    count: usize,
    out: &str,
    label: &str,
    cmd: &[String],
) -> Result<(), String> {
    let _ = std::fs::remove_file(out);
    let began = Instant::now();
    let mut child = spawn(cmd, kubeconfig, ns, out)?;
    let pid = child.id();
    let mut peak = 0.0f64;
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut n = 0;
    while Instant::now() < deadline {
        peak = peak.max(peak_rss_mib(pid));
        n = handled(out).len();
        if n >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = began.elapsed();
    peak = peak.max(peak_rss_mib(pid));
    let _ = child.kill();
    let _ = child.wait();
    // Every event is there before the handler starts, so the span from its first call to its last is the
    // framework's own rate of handling events, whatever the API server's write rate (which bounds the
    // latency run's throughput for every framework that keeps up with the creator).
    let stamps = handled(out);
    let span = match (stamps.values().min(), stamps.values().max()) {
        (Some(first), Some(last)) => last.saturating_sub(*first) as f64 / 1e9,
        _ => 0.0,
    };
    println!(
        "{}: initial sync, {n} of {count} ConfigMaps handled in {:.2} s from process start; first to last \
         handler call {span:.3} s ({:.0} events/s); peak RSS {peak:.1} MiB",
        label,
        took.as_secs_f64(),
        stamps.len() as f64 / span.max(1e-9),
    );
    Ok(())
}
