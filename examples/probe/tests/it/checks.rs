//! `check` with every kind of check, each passing and failing against what the test serves.

use crate::common;

use common::*;
use piceli::runtime::journal::Journal;
use piceli_sim::{Sim, SimConfig};

#[test]
fn every_kind_passes_and_fails() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = probe("kinds", dir.path(), &sim)
        .arg("plan")
        .assert()
        .code(3);
    let plan: serde_json::Value =
        serde_json::from_slice(&plan.get_output().stdout).expect("plan JSON");
    let hash = plan["hash"].as_str().expect("hash");
    probe("kinds", dir.path(), &sim)
        .args(["apply", "--approve", hash])
        .assert()
        .success();
    let scrape = "# TYPE up gauge\nup{job=\"web\"} 1\nerrors_total 3\n";
    sim.map_port(NAMESPACE, WEB, 9090, serve(200, scrape))
        .expect("map port");

    let out = probe("kinds", dir.path(), &sim)
        .arg("check")
        .assert()
        .code(1);
    let body: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("one JSON document");
    assert_eq!(body["passed"], false);
    assert_eq!(body["release"], 1);
    let seen: Vec<(String, bool)> = body["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["passed"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    let expected = [
        ("http-ok", true),
        ("http-bad", false),
        ("exec-ok", true),
        ("exec-bad", false),
        ("exec-output", true),
        ("exec-quiet", false),
        ("metric-ok", true),
        ("metric-bad", false),
        ("code-ok", true),
        ("code-bad", false),
    ];
    let expected: Vec<(String, bool)> = expected.iter().map(|(n, p)| (n.to_string(), *p)).collect();
    assert_eq!(seen, expected, "{body:#}");
    let by_name = |name: &str| {
        body["checks"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == name))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(by_name("exec-bad")["attempts"], 2, "retried");
    assert!(
        by_name("exec-quiet")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("stdout does not contain `accepting`"),
        "{body:#}"
    );
    assert!(
        by_name("metric-bad")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`errors_total` is 3, above the maximum 0"),
        "{body:#}"
    );
    assert!(
        by_name("code-bad")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no `Welcome`"),
        "{body:#}"
    );

    // The journal keeps them for `status`.
    let journal = Journal::open(&dir.path().join(".piceli/probe/local")).expect("journal");
    let last = journal.last_check_results().expect("results");
    assert_eq!(last.len(), 10);
    assert_eq!(last.iter().filter(|r| r.passed).count(), 5, "{last:?}");
    assert!(last.iter().all(|r| r.release == Some(1)));
}
