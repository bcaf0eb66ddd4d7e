//! Load with faults (issue 34): concurrent writers and watchers against a background local cluster
//! (`piceli-sim start`, its own process) with random client disconnects — watches dropped mid-stream
//! and resumed from their last resourceVersion (bookmarks included), re-listed on 410 Gone as a real
//! client does, writes abandoned in flight — and the watch history compacted every few seconds (as
//! etcd compaction does), so resumes from before it get 410 Gone. At the end every watcher's reconstructed state must equal
//! a fresh list (with its label selector), and the server's resident set, sampled all along, must be
//! flat after the warm-up. Linux only (/proc).
//!
//! Bounded here (20 watchers, 20 writers, 30 s); `benches/scripts/sim-load.sh` runs the same driver
//! at 100 × 100 for 10 minutes through `PICELI_LOAD_WATCHERS`, `PICELI_LOAD_WRITERS`,
//! `PICELI_LOAD_SECONDS`, `PICELI_LOAD_SAMPLE_SECONDS` and `PICELI_LOAD_PICELI` (a `piceli` binary
//! whose `piceli sim` serves instead of this crate's `piceli-sim`); `PICELI_LOAD_SEED` replays a run.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;

use crate::background::{client, sim_cmd, start, status_kb};

/// The namespace the load runs in.
const NS: &str = "load";
/// Names each writer cycles through (created, changed, deleted, created again).
const NAMES_PER_WRITER: u64 = 8;
/// The object whose creation, after the writers stopped, tells each watcher it has seen everything.
const SENTINEL: &str = "load-end";
/// How much the resident set may rise from the end of the warm-up to the end of the run.
const FLAT_SLACK_KB: u64 = 24 * 1024;

/// The run's size, from the environment or the bounded defaults.
struct Plan {
    watchers: usize,
    writers: usize,
    duration: Duration,
    sample_every: Duration,
    seed: u64,
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

impl Plan {
    fn from_env() -> Plan {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Plan {
            watchers: env_or("PICELI_LOAD_WATCHERS", 20) as usize,
            writers: env_or("PICELI_LOAD_WRITERS", 20) as usize,
            duration: Duration::from_secs(env_or("PICELI_LOAD_SECONDS", 30)),
            sample_every: Duration::from_secs(env_or("PICELI_LOAD_SAMPLE_SECONDS", 2)),
            seed: env_or("PICELI_LOAD_SEED", nanos | 1),
        }
    }
}

/// xorshift64*: enough randomness for fault timing, replayable from a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from))
    }
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn name_of(cm: &ConfigMap) -> String {
    cm.metadata.name.clone().unwrap_or_default()
}

/// What a watcher (or a list) holds of one object.
type Seen = BTreeMap<String, (String, Option<BTreeMap<String, String>>)>;

fn entry(cm: &ConfigMap) -> (String, Option<BTreeMap<String, String>>) {
    (
        cm.metadata.resource_version.clone().unwrap_or_default(),
        cm.data.clone(),
    )
}

/// The label selector of watcher `i`: every third one sees only `tier=a`, so objects relabelled
/// in and out of its view arrive as ADDED and DELETED.
fn selector(i: usize) -> Option<&'static str> {
    (i % 3 == 2).then_some("tier=a")
}

/// Per-run counters.
#[derive(Default)]
struct Counts {
    events: AtomicU64,
    disconnects: AtomicU64,
    relists: AtomicU64,
    gone: AtomicU64,
    writes: AtomicU64,
    abandoned: AtomicU64,
    compactions: AtomicU64,
    /// Requests retried after a transport error (a keep-alive connection closed under them).
    transport: AtomicU64,
}

/// The pause before retrying a request that failed below HTTP.
async fn retry_pause() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// One watcher: list, then watch from the list's version, dropping the stream at random moments and
/// resuming from the last version seen; a 410 (as an ERROR event or the watch's answer) re-lists.
/// Returns its state once it has seen [`SENTINEL`] after `stop`.
async fn watcher(
    api: Api<ConfigMap>,
    sel: Option<&'static str>,
    mut rng: Rng,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
) -> Seen {
    let mut state = Seen::new();
    let mut last: Option<String> = None;
    let mut lp = ListParams::default();
    let mut wp = WatchParams::default().timeout(60);
    if let Some(s) = sel {
        lp = lp.labels(s);
        wp = wp.labels(s);
    }
    loop {
        if stop.load(Ordering::Relaxed) && state.contains_key(SENTINEL) {
            return state;
        }
        let from = match &last {
            Some(rv) => rv.clone(),
            None => {
                let list = match api.list(&lp).await {
                    Ok(l) => l,
                    // A pooled connection the server closed as idle just as the request went out
                    // (HTTP/1.1's keep-alive race): a real client retries, as Go's transport does.
                    Err(kube::Error::Service(_)) => {
                        counts.transport.fetch_add(1, Ordering::Relaxed);
                        retry_pause().await;
                        continue;
                    }
                    Err(e) => panic!("list: {e}"),
                };
                counts.relists.fetch_add(1, Ordering::Relaxed);
                state = list.items.iter().map(|c| (name_of(c), entry(c))).collect();
                let rv = list.metadata.resource_version.expect("list version");
                last = Some(rv.clone());
                rv
            }
        };
        let stream = match api.watch(&wp, &from).await {
            Ok(s) => s,
            Err(kube::Error::Api(s)) if s.code == 410 => {
                counts.gone.fetch_add(1, Ordering::Relaxed);
                last = None;
                continue;
            }
            Err(kube::Error::Service(_)) => {
                counts.transport.fetch_add(1, Ordering::Relaxed);
                retry_pause().await;
                continue;
            }
            Err(e) => panic!("watch from {from}: {e}"),
        };
        let mut stream = std::pin::pin!(stream);
        // The fault: this connection is dropped after a random while, wherever the stream is.
        let cut = tokio::time::sleep(rng.millis(100, 2_000));
        let mut cut = std::pin::pin!(cut);
        loop {
            let event = tokio::select! {
                e = stream.next() => e,
                _ = &mut cut => {
                    counts.disconnects.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            };
            let Some(event) = event else { break }; // the server ended the watch
            counts.events.fetch_add(1, Ordering::Relaxed);
            match event.expect("a watch event") {
                WatchEvent::Added(c) | WatchEvent::Modified(c) => {
                    last = c.metadata.resource_version.clone();
                    state.insert(name_of(&c), entry(&c));
                }
                WatchEvent::Deleted(c) => {
                    last = c.metadata.resource_version.clone();
                    state.remove(&name_of(&c));
                }
                WatchEvent::Bookmark(b) => last = Some(b.metadata.resource_version),
                WatchEvent::Error(s) if s.code == 410 => {
                    counts.gone.fetch_add(1, Ordering::Relaxed);
                    last = None;
                    break;
                }
                WatchEvent::Error(s) => panic!("watch error: {s:?}"),
            }
            if stop.load(Ordering::Relaxed) && state.contains_key(SENTINEL) {
                return state;
            }
        }
    }
}

/// One writer: creates, changes (data and the `tier` label) and deletes its own objects until
/// `stop`, abandoning some requests in flight (the client goes away mid-write).
async fn writer(
    api: Api<ConfigMap>,
    w: usize,
    mut rng: Rng,
    stop: Arc<AtomicBool>,
    c: Arc<Counts>,
) {
    let pp = PatchParams::default();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let name = format!("w{w}-{}", rng.below(NAMES_PER_WRITER));
        let tier = if rng.below(2) == 0 { "a" } else { "b" };
        let body = json!({"metadata": {"labels": {"tier": tier}}, "data": {"n": n.to_string()}});
        let op = rng.below(10);
        let call = async {
            match op {
                0..=1 => api
                    .delete(&name, &DeleteParams::default())
                    .await
                    .map(|_| ()),
                2..=3 => {
                    let mut cm: ConfigMap = serde_json::from_value(body.clone()).expect("cm");
                    cm.metadata.name = Some(name.clone());
                    api.create(&PostParams::default(), &cm).await.map(|_| ())
                }
                _ => api
                    .patch(&name, &pp, &Patch::Merge(&body))
                    .await
                    .map(|_| ()),
            }
        };
        // One request in twenty is abandoned after 0–5 ms: it may or may not have been stored.
        let abandon = rng.below(20) == 0;
        let result = if abandon {
            match tokio::time::timeout(rng.millis(0, 5), call).await {
                Ok(r) => r,
                Err(_) => {
                    c.abandoned.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
        } else {
            call.await
        };
        match result {
            Ok(()) => {
                c.writes.fetch_add(1, Ordering::Relaxed);
            }
            // Not found (patch or delete of a deleted object), already exists (create): expected.
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
            // The keep-alive race (see `watcher`): not stored or stored, as an abandoned write.
            Err(kube::Error::Service(_)) => {
                c.transport.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("write {name}: {e}"),
        }
        tokio::time::sleep(rng.millis(0, 20)).await;
    }
}

/// Least-squares slope of (seconds, kB) in kB per minute.
fn slope_kb_per_min(samples: &[(f64, u64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let sxy: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 as f64 - my)).sum();
    let sxx: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    if sxx == 0.0 { 0.0 } else { 60.0 * sxy / sxx }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watchers_see_every_change_and_memory_stays_flat_under_disconnects() {
    let plan = Plan::from_env();
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let pid = start(dir.path());
    let outcome =
        futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(run(&plan, dir.path(), pid)))
            .await;
    let stopped = sim_cmd(&["stop", "--dir", d]);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    assert!(stopped.status.success(), "{stopped:?}");
}

async fn run(plan: &Plan, dir: &Path, pid: u32) {
    eprintln!(
        "load: {} watchers, {} writers, {} s, seed {}",
        plan.watchers,
        plan.writers,
        plan.duration.as_secs(),
        plan.seed
    );
    let admin = client(dir).await;
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NS}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let mut seed = Rng(plan.seed);
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let fds_before = open_fds(pid);

    let mut writers = Vec::new();
    let writes_client = client(dir).await;
    for w in 0..plan.writers {
        let api = Api::namespaced(writes_client.clone(), NS);
        let rng = Rng(seed.next() | 1);
        writers.push(tokio::spawn(writer(
            api,
            w,
            rng,
            stop.clone(),
            counts.clone(),
        )));
    }
    let mut watchers = Vec::new();
    for i in 0..plan.watchers {
        // Each watcher its own client: its disconnects are its own connections'.
        let api: Api<ConfigMap> = Api::namespaced(client(dir).await, NS);
        let rng = Rng(seed.next() | 1);
        let task = watcher(api, selector(i), rng, stop.clone(), counts.clone());
        watchers.push(tokio::spawn(task));
    }

    // The history compacted every 3–8 s (`piceli-sim compact`, another process on the same database).
    let compactor = {
        let (stop, counts, dir) = (stop.clone(), counts.clone(), dir.to_path_buf());
        let mut rng = Rng(seed.next() | 1);
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(rng.millis(3_000, 8_000)).await;
                let d = dir.clone();
                let out = tokio::task::spawn_blocking(move || {
                    sim_cmd(&["compact", "--dir", d.to_str().unwrap_or_default()])
                })
                .await
                .expect("compact");
                assert!(out.status.success(), "compact: {out:?}");
                counts.compactions.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    // The resident set every few seconds while the load runs.
    let t0 = Instant::now();
    let mut samples = Vec::new();
    while t0.elapsed() < plan.duration {
        tokio::time::sleep(plan.sample_every).await;
        samples.push((t0.elapsed().as_secs_f64(), status_kb(pid, "VmRSS")));
    }
    stop.store(true, Ordering::Relaxed);
    compactor.await.expect("compactor");
    for w in writers {
        w.await.expect("writer");
    }
    let api: Api<ConfigMap> = Api::namespaced(admin.clone(), NS);
    let mut end = ConfigMap::default();
    end.metadata.name = Some(SENTINEL.into());
    end.metadata.labels = Some([("tier".to_string(), "a".to_string())].into());
    api.create(&PostParams::default(), &end)
        .await
        .expect("sentinel");

    let mut checked = 0;
    for (i, w) in watchers.into_iter().enumerate() {
        let seen = tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .expect("the watcher caught up in time")
            .expect("watcher");
        let mut lp = ListParams::default();
        if let Some(s) = selector(i) {
            lp = lp.labels(s);
        }
        let listed: Seen = api
            .list(&lp)
            .await
            .expect("list")
            .items
            .iter()
            .map(|c| (name_of(c), entry(c)))
            .collect();
        assert_eq!(
            seen,
            listed,
            "watcher {i} ({:?}): its state differs from a list",
            selector(i)
        );
        checked += listed.len();
    }

    // Every connection is gone: the server's descriptors come back to where they were.
    drop((api, admin, namespaces, writes_client));
    let mut fds_after = open_fds(pid);
    for _ in 0..50 {
        if fds_after <= fds_before + 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        fds_after = open_fds(pid);
    }

    let warm = samples.len() / 3;
    let after_warm = &samples[warm..];
    let slope = slope_kb_per_min(after_warm);
    let first = after_warm.first().map_or(0, |s| s.1);
    let peak_after = after_warm.iter().map(|s| s.1).max().unwrap_or(0);
    let last_third_peak = samples[2 * samples.len() / 3..]
        .iter()
        .map(|s| s.1)
        .max()
        .unwrap_or(0);
    let middle_peak = samples[warm..2 * samples.len() / 3]
        .iter()
        .map(|s| s.1)
        .max()
        .unwrap_or(0);
    eprintln!(
        "load: {} watch events, {} disconnects, {} compactions, {} lists, {} × 410, {} transport retries, {} writes (+{} abandoned); {} objects compared over {} watchers",
        counts.events.load(Ordering::Relaxed),
        counts.disconnects.load(Ordering::Relaxed),
        counts.compactions.load(Ordering::Relaxed),
        counts.relists.load(Ordering::Relaxed),
        counts.gone.load(Ordering::Relaxed),
        counts.transport.load(Ordering::Relaxed),
        counts.writes.load(Ordering::Relaxed),
        counts.abandoned.load(Ordering::Relaxed),
        checked,
        plan.watchers,
    );
    eprintln!(
        "load: VmRSS after warm-up {first} kB, peak since {peak_after} kB, peak of the middle third {middle_peak} kB, of the last third {last_third_peak} kB, slope {slope:.0} kB/min; VmHWM {} kB; open fds {fds_before} before, {fds_after} after",
        status_kb(pid, "VmHWM"),
    );
    eprintln!(
        "load: samples (s, kB): {:?}",
        samples
            .iter()
            .map(|(t, kb)| (t.round() as u64, *kb))
            .collect::<Vec<_>>()
    );
    assert!(
        counts.disconnects.load(Ordering::Relaxed) > 0,
        "faults were injected"
    );
    assert!(
        counts.gone.load(Ordering::Relaxed) > 0,
        "resumes met compactions"
    );
    assert!(
        fds_after <= fds_before + 4,
        "connections leaked: {fds_before} descriptors before, {fds_after} after"
    );
    assert!(
        last_third_peak <= middle_peak + FLAT_SLACK_KB,
        "the resident set kept growing: middle third peak {middle_peak} kB, last third {last_third_peak} kB"
    );
}

#[test]
fn the_slope_is_least_squares_per_minute() {
    let flat = [(0.0, 100), (30.0, 100), (60.0, 100)];
    assert_eq!(slope_kb_per_min(&flat), 0.0);
    let rising = [(0.0, 100), (30.0, 150), (60.0, 200)];
    assert!((slope_kb_per_min(&rising) - 100.0).abs() < 1e-9);
}
