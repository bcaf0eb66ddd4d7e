//! The server's Prometheus metrics: requests, denials, failures and a latency histogram per webhook,
//! kept in atomics (no lock on the request path) and written as Prometheus text.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use super::endpoint::FailureKind;
use super::registry::Route;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5, 10.0,
];

/// One webhook's counters.
#[derive(Default)]
pub(crate) struct RouteMetrics {
    /// By dry run: `[false, true]`.
    requests: [AtomicU64; 2],
    denials: [AtomicU64; 2],
    /// By [`FailureKind`]: panic, timeout, error.
    failures: [AtomicU64; 3],
    malformed: AtomicU64,
    latency_buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_ns: AtomicU64,
}

impl RouteMetrics {
    /// Counts one answered request.
    pub fn answered(
        &self,
        dry_run: bool,
        allowed: bool,
        failure: Option<FailureKind>,
        took: Duration,
    ) {
        let d = usize::from(dry_run);
        self.requests[d].fetch_add(1, Relaxed);
        if !allowed {
            self.denials[d].fetch_add(1, Relaxed);
        }
        if let Some(kind) = failure {
            let i = match kind {
                FailureKind::Panic => 0,
                FailureKind::Timeout => 1,
                FailureKind::Error => 2,
            };
            self.failures[i].fetch_add(1, Relaxed);
        }
        let secs = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.latency_buckets[i].fetch_add(1, Relaxed);
        }
        self.latency_count.fetch_add(1, Relaxed);
        self.latency_sum_ns
            .fetch_add(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Relaxed);
    }

    /// Counts one body that was not an AdmissionReview.
    pub fn malformed(&self) {
        self.malformed.fetch_add(1, Relaxed);
    }
}

/// Server-wide counters.
#[derive(Default)]
pub(crate) struct ServerMetrics {
    pub connections: AtomicU64,
    pub handshake_failures: AtomicU64,
    pub certificate_reloads: AtomicU64,
}

/// The Prometheus text exposition of every counter.
pub(crate) fn render<'a>(
    server: &ServerMetrics,
    routes: impl Iterator<Item = &'a Route>,
) -> String {
    let mut routes: Vec<&Route> = routes.collect();
    routes.sort_by_key(|r| r.path());
    let mut out = String::with_capacity(4096);
    let head = |out: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    };
    head(
        &mut out,
        "piceli_webhook_requests_total",
        "counter",
        "Admission requests answered, by webhook and dry run.",
    );
    for r in &routes {
        for (d, dry) in ["false", "true"].iter().enumerate() {
            let _ = writeln!(
                out,
                "piceli_webhook_requests_total{{{},dry_run=\"{dry}\"}} {}",
                labels(r),
                r.metrics.requests[d].load(Relaxed)
            );
        }
    }
    head(
        &mut out,
        "piceli_webhook_denials_total",
        "counter",
        "Admission requests denied (by the handler or because it failed), by webhook and dry run.",
    );
    for r in &routes {
        for (d, dry) in ["false", "true"].iter().enumerate() {
            let _ = writeln!(
                out,
                "piceli_webhook_denials_total{{{},dry_run=\"{dry}\"}} {}",
                labels(r),
                r.metrics.denials[d].load(Relaxed)
            );
        }
    }
    head(
        &mut out,
        "piceli_webhook_handler_failures_total",
        "counter",
        "Handlers that panicked, timed out or returned an error, by webhook.",
    );
    for r in &routes {
        for (i, reason) in ["panic", "timeout", "error"].iter().enumerate() {
            let _ = writeln!(
                out,
                "piceli_webhook_handler_failures_total{{{},reason=\"{reason}\"}} {}",
                labels(r),
                r.metrics.failures[i].load(Relaxed)
            );
        }
    }
    head(
        &mut out,
        "piceli_webhook_malformed_requests_total",
        "counter",
        "Request bodies that were not an AdmissionReview (answered 400), by webhook.",
    );
    for r in &routes {
        let _ = writeln!(
            out,
            "piceli_webhook_malformed_requests_total{{{}}} {}",
            labels(r),
            r.metrics.malformed.load(Relaxed)
        );
    }
    head(
        &mut out,
        "piceli_webhook_duration_seconds",
        "histogram",
        "Time from the whole body read to the response, by webhook.",
    );
    for r in &routes {
        let m = &r.metrics;
        let mut cumulative = 0;
        for (i, bound) in BUCKETS.iter().enumerate() {
            cumulative += m.latency_buckets[i].load(Relaxed);
            let _ = writeln!(
                out,
                "piceli_webhook_duration_seconds_bucket{{{},le=\"{bound}\"}} {cumulative}",
                labels(r)
            );
        }
        let count = m.latency_count.load(Relaxed);
        let sum = m.latency_sum_ns.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(
            out,
            "piceli_webhook_duration_seconds_bucket{{{},le=\"+Inf\"}} {count}\n\
             piceli_webhook_duration_seconds_sum{{{}}} {sum}\n\
             piceli_webhook_duration_seconds_count{{{}}} {count}",
            labels(r),
            labels(r),
            labels(r)
        );
    }
    for (name, help, value) in [
        (
            "piceli_webhook_connections_total",
            "TCP connections accepted.",
            &server.connections,
        ),
        (
            "piceli_webhook_tls_handshake_failures_total",
            "TLS handshakes that failed or timed out.",
            &server.handshake_failures,
        ),
        (
            "piceli_webhook_certificate_reloads_total",
            "Times the serving certificate was reloaded after its files changed.",
            &server.certificate_reloads,
        ),
    ] {
        head(&mut out, name, "counter", help);
        let _ = writeln!(out, "{name} {}", value.load(Relaxed));
    }
    out
}

fn labels(route: &Route) -> String {
    let kind = match route.kind {
        super::registry::WebhookKind::Validate => "validate",
        super::registry::WebhookKind::Mutate => "mutate",
    };
    format!("webhook=\"{}\",type=\"{kind}\"", route.name)
}
