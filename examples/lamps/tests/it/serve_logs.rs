//! `lamps serve --log-format json` on the test's cluster, with the operator's token: every line it prints
//! on stderr is a JSON object; each reconcile outcome is one line at info in the `reconcile` span of its
//! controller and object (`reconciled`, or `reconcile failed` with the API server's message and no
//! `Debug` dump of its Status); and SIGTERM stops it within a second and a half (measured and printed).

use crate::support;

use std::time::{Duration, Instant};

use piceli_test_support::Cluster;
use serde_json::Value;
use support::{deploy, free_port, http_get, json, kubectl, serve_with, stop, wait_for};

/// The lines of the log that are JSON objects; panics on any other line.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\nthe whole log:\n{text}"));
            assert!(v.is_object(), "not a JSON object: {l}");
            v
        })
        .collect()
}

/// The outcome lines of `object` under `controller`.
fn outcomes<'a>(lines: &'a [Value], controller: &str, object: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| {
            l["span"]["name"] == "reconcile"
                && l["span"]["controller"] == controller
                && l["span"]["object"] == object
                && l["outcome"].is_string()
        })
        .collect()
}

#[test]
fn serve_logs_json_lines_with_one_outcome_per_reconcile_and_stops_promptly() {
    let sim = Cluster::start();
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let admin = sim.kubeconfig_path().to_path_buf();
    let operator = deploy(&sim, dir);
    let addr = free_port();
    let log_path = dir.join("serve.log");
    let child = serve_with(
        &operator,
        addr,
        "lamps-json",
        &log_path,
        &["--log-format", "json"],
    );
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let started = Instant::now();
    while http_get(addr, "/readyz").is_none_or(|(s, _)| s != 200) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "serve not ready after 30 s; its log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The shipped Lamp: reconciled, and said so once per reconcile at info.
    wait_for("the shipped lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "hall"])
            .is_some_and(|l| l["status"]["shining"] == "white")
    });
    wait_for(
        "the reconcile line of the shipped lamp",
        Duration::from_secs(10),
        || !outcomes(&json_lines(&log()), "lamp", "lamps-system/hall").is_empty(),
    );
    let lines = json_lines(&log());
    let hall = outcomes(&lines, "lamp", "lamps-system/hall");
    let ok = hall
        .iter()
        .find(|l| l["outcome"] == "ok")
        .unwrap_or_else(|| panic!("an ok outcome for the hall lamp: {hall:#?}"));
    println!("a reconcile outcome: {ok}");
    assert_eq!(ok["level"], "INFO", "{ok}");
    assert_eq!(ok["message"], "reconciled", "{ok}");
    assert!(ok["duration_ms"].is_u64(), "{ok}");
    assert!(ok["timestamp"].is_string(), "{ok}");

    // A Lamp whose child ConfigMap name is too long: the API server refuses it, and the failure is logged
    // with the server's message, not a Debug dump of its Status.
    let long = "a".repeat(250);
    let manifest = format!(
        "apiVersion: example.com/v1\nkind: Lamp\nmetadata: {{name: {long}, namespace: lamps-system}}\nspec: {{color: red}}\n"
    );
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&manifest));
    assert_eq!(code, 0, "{out}{err}");
    let object = format!("lamps-system/{long}");
    wait_for(
        "the failed reconcile's line",
        Duration::from_secs(30),
        || {
            outcomes(&json_lines(&log()), "lamp", &object)
                .iter()
                .any(|l| l["outcome"] == "error")
        },
    );
    let lines = json_lines(&log());
    let failed = outcomes(&lines, "lamp", &object)
        .into_iter()
        .find(|l| l["outcome"] == "error")
        .expect("an error outcome");
    assert_eq!(failed["level"], "WARN", "{failed}");
    assert_eq!(failed["code"], "PCL0172", "{failed}");
    assert!(failed["retry_in_ms"].is_u64(), "{failed}");
    let error = failed["error"].as_str().expect("error text");
    assert!(
        error.contains("is invalid") && !error.contains("Status {"),
        "the API server's message, without a Debug dump: {error}"
    );
    let (code, out, err) = kubectl(
        &admin,
        &[
            "-n",
            "lamps-system",
            "delete",
            "lamp",
            &long,
            "--wait=false",
        ],
        None,
    );
    assert_eq!(code, 0, "{out}{err}");

    let signalled = Instant::now();
    let status = stop(child);
    let took = signalled.elapsed();
    println!("lamps serve stopped {took:?} after SIGTERM");
    assert!(
        status.success(),
        "serve exits 0 on SIGTERM: {status}\n{}",
        log()
    );
    assert!(
        took < Duration::from_millis(1500),
        "serve took {took:?} to stop after SIGTERM; its log:\n{}",
        log()
    );
    let lines = json_lines(&log());
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "released the leader Lease"),
        "the Lease is released at shutdown: {}",
        log()
    );
}
