//! Controller metrics in atomics, written as Prometheus text: reconciles, errors and a duration
//! histogram per controller, objects waiting for a reconcile (the queue depth), in flight and waiting for
//! a retry, cache sync and leader status.

use std::collections::HashSet;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds of the duration buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0,
];

/// One controller's counters.
#[derive(Debug, Default)]
pub struct ControllerMetrics {
    reconciles: AtomicU64,
    errors: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    sum_ns: AtomicU64,
    in_flight: AtomicI64,
    retrying: AtomicI64,
    /// Watches of this controller whose cache has not synced yet.
    unsynced: AtomicI64,
    /// Objects (`ns/name`) a change or a requeue is due for whose reconcile has not started yet.
    queued: Mutex<HashSet<String>>,
}

impl ControllerMetrics {
    pub(crate) fn started(&self) {
        self.in_flight.fetch_add(1, Relaxed);
    }

    pub(crate) fn finished(&self, took: Duration, ok: bool) {
        self.in_flight.fetch_sub(1, Relaxed);
        self.reconciles.fetch_add(1, Relaxed);
        if !ok {
            self.errors.fetch_add(1, Relaxed);
        }
        let secs = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.sum_ns
            .fetch_add(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Relaxed);
    }

    /// `key` has a reconcile coming (kube's scheduler runs one per object however many are due).
    pub(crate) fn queued(&self, key: String) {
        if let Ok(mut q) = self.queued.lock() {
            q.insert(key);
        }
    }

    /// `key`'s reconcile started, or its object is gone.
    pub(crate) fn dequeued(&self, key: &str) {
        if let Ok(mut q) = self.queued.lock() {
            q.remove(key);
        }
    }

    /// Objects waiting for their reconcile to start (changes seen, not yet handled).
    pub fn queue_depth(&self) -> usize {
        self.queued.lock().map(|q| q.len()).unwrap_or(0)
    }

    /// Objects being handled now.
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Relaxed)
    }

    pub(crate) fn retrying(&self, delta: i64) {
        self.retrying.fetch_add(delta, Relaxed);
    }

    pub(crate) fn watching(&self, delta: i64) {
        self.unsynced.fetch_add(delta, Relaxed);
    }

    /// Reconciles (handler calls) so far.
    pub fn reconciles(&self) -> u64 {
        self.reconciles.load(Relaxed)
    }

    /// Failed handler calls so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Relaxed)
    }

    /// Whether every watch of this controller has listed its objects.
    pub fn synced(&self) -> bool {
        self.unsynced.load(Relaxed) <= 0
    }
}

/// Every controller's metrics and the leader status.
#[derive(Debug, Default)]
pub struct Metrics {
    pub(crate) controllers: Vec<(String, std::sync::Arc<ControllerMetrics>)>,
    pub(crate) leader: AtomicBool,
    pub(crate) running: AtomicBool,
}

impl Metrics {
    /// The metrics of the controller `name`.
    pub fn controller(&self, name: &str) -> Option<&ControllerMetrics> {
        self.controllers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m.as_ref())
    }

    /// Whether this process holds the leader Lease (always true without leader election, once running).
    pub fn is_leader(&self) -> bool {
        self.leader.load(Relaxed)
    }

    /// Ready: leading and every cache synced, or a standby (it serves, but does not reconcile).
    pub fn ready(&self) -> bool {
        self.running.load(Relaxed)
            && (!self.is_leader() || self.controllers.iter().all(|(_, m)| m.synced()))
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, kind: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        counter(
            &mut out,
            "piceli_controller_reconciles_total",
            "Handler calls.",
            "counter",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_reconciles_total{{controller=\"{n}\"}} {}",
                m.reconciles()
            );
        }
        counter(
            &mut out,
            "piceli_controller_errors_total",
            "Failed handler calls.",
            "counter",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_errors_total{{controller=\"{n}\"}} {}",
                m.errors()
            );
        }
        counter(
            &mut out,
            "piceli_controller_reconcile_duration_seconds",
            "Handler call duration.",
            "histogram",
        );
        for (n, m) in &self.controllers {
            let mut cumulative = 0;
            for (i, b) in BUCKETS.iter().enumerate() {
                cumulative += m.buckets[i].load(Relaxed);
                let _ = writeln!(
                    out,
                    "piceli_controller_reconcile_duration_seconds_bucket{{controller=\"{n}\",le=\"{b}\"}} {cumulative}"
                );
            }
            let count = m.reconciles();
            let sum = m.sum_ns.load(Relaxed) as f64 / 1e9;
            let _ = writeln!(
                out,
                "piceli_controller_reconcile_duration_seconds_bucket{{controller=\"{n}\",le=\"+Inf\"}} {count}\n\
                 piceli_controller_reconcile_duration_seconds_sum{{controller=\"{n}\"}} {sum}\n\
                 piceli_controller_reconcile_duration_seconds_count{{controller=\"{n}\"}} {count}"
            );
        }
        counter(
            &mut out,
            "piceli_controller_queue_depth",
            "Objects whose change was seen and whose reconcile has not started yet.",
            "gauge",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_queue_depth{{controller=\"{n}\"}} {}",
                m.queue_depth()
            );
        }
        counter(
            &mut out,
            "piceli_controller_in_flight",
            "Objects being handled now.",
            "gauge",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_in_flight{{controller=\"{n}\"}} {}",
                m.in_flight.load(Relaxed)
            );
        }
        counter(
            &mut out,
            "piceli_controller_retry_queue",
            "Objects waiting to be retried after a failure.",
            "gauge",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_retry_queue{{controller=\"{n}\"}} {}",
                m.retrying.load(Relaxed).max(0)
            );
        }
        counter(
            &mut out,
            "piceli_controller_cache_synced",
            "1 once every watch of the controller has listed.",
            "gauge",
        );
        for (n, m) in &self.controllers {
            let _ = writeln!(
                out,
                "piceli_controller_cache_synced{{controller=\"{n}\"}} {}",
                u8::from(m.synced())
            );
        }
        counter(
            &mut out,
            "piceli_controller_leader",
            "1 while this process holds the leader Lease.",
            "gauge",
        );
        let _ = writeln!(
            out,
            "piceli_controller_leader {}",
            u8::from(self.is_leader())
        );
        out
    }
}
