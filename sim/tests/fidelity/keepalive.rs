//! Keep-alive as kube-apiserver keeps it (Go's `IdleTimeout: 90s`, `ReadHeaderTimeout` from a request's
//! first byte): a pooled connection reused after a pause longer than the header timeout still answers —
//! with a body big enough that a closed connection shows as a broken pipe —, an idle one is closed after
//! the idle timeout, and a request head dripped on a reused connection is still cut by the header timeout.
//! Driven by Python's `http.client` on one connection (`keepalive_client.py`), which does not reconnect
//! behind the test's back as pools do. The timeouts are shortened through `SimConfig` so each case takes
//! a few seconds.

use std::time::Duration;

use piceli_sim::{RunningSim, Sim, SimConfig};

fn sim_with(header: Duration, idle: Option<Duration>) -> RunningSim {
    let mut config = SimConfig::default();
    config.controllers.enabled = false;
    config.header_timeout = Some(header);
    config.idle_timeout = idle;
    Sim::start(config).expect("simulator starts")
}

/// Runs `keepalive_client.py KUBECONFIG MODE SECONDS` and returns its output line.
fn client(sim: &RunningSim, mode: &str, seconds: f64) -> String {
    let seconds = seconds.to_string();
    crate::common::python_client(
        sim,
        "keepalive_client.py",
        &[mode, &seconds],
        &format!("the keep-alive client ({mode})"),
    )
}

#[test]
fn a_connection_reused_after_a_pause_longer_than_the_header_timeout_answers() {
    // Idle 2.5 s against a 1 s header timeout (the default idle timeout is 90 s).
    let sim = sim_with(Duration::from_secs(1), None);
    let out = client(&sim, "reuse", 2.5);
    assert!(out.contains("reuse: 201 on the same connection"), "{out}");
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let sim = sim_with(
        Duration::from_millis(500),
        Some(Duration::from_millis(1500)),
    );
    let out = client(&sim, "closed", 3.0);
    assert!(out.contains("closed: the server closed"), "{out}");
}

#[test]
fn a_dripped_head_on_a_reused_connection_is_cut_by_the_header_timeout() {
    let sim = sim_with(Duration::from_millis(1000), None);
    let out = client(&sim, "drip", 2.0);
    assert!(out.contains("drip: closed"), "{out}");
}
