//! `deploy` against the local cluster: automatic rollback after a failed check, a first release with
//! nothing to roll back to, a crash-looping rollout resumed, and a change to checks only.

use crate::common;

use common::*;
use piceli::runtime::journal::Journal;
use piceli_sim::{Sim, SimConfig};

#[test]
fn a_failed_check_rolls_back_to_the_previous_release() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let hash = hash_to_approve("v1", dir.path(), &sim);
    probe("v1", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .success();
    assert_eq!(live_image(&sim), probe::IMAGE_V1);

    // From now on the web pods answer 500.
    let failing = serve(500, "broken");
    sim.map_port(NAMESPACE, WEB, 80, failing).expect("map port");
    let hash = hash_to_approve("v2", dir.path(), &sim);
    let out = probe("v2", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .code(1);
    let lines = lines(&out);
    let checks = events(&lines, "check");
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["passed"], false);
    assert!(
        checks[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("got status 500, expected 200"),
        "{checks:?}"
    );
    let rollback = events(&lines, "rollback");
    assert_eq!(rollback.len(), 1, "{lines:?}");
    assert_eq!(rollback[0]["failed_release"], 2);
    assert_eq!(rollback[0]["restored"], 1);
    assert_eq!(rollback[0]["release"], 3);
    let result = result(&lines);
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"]["code"], "PCL0130");
    assert_eq!(result["failed"], serde_json::json!(["http-web"]));
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("release 1's objects are live again as release 3"),
        "{message}"
    );

    // The previous release is live again, and history shows both.
    assert_eq!(live_image(&sim), probe::IMAGE_V1);
    let history = probe("v2", dir.path(), &sim)
        .arg("history")
        .assert()
        .success();
    let history: serde_json::Value =
        serde_json::from_slice(&history.get_output().stdout).expect("history JSON");
    let states: Vec<(u64, String, String)> = history["releases"]
        .as_array()
        .expect("releases")
        .iter()
        .map(|r| {
            (
                r["release"].as_u64().unwrap_or_default(),
                r["kind"].as_str().unwrap_or_default().to_string(),
                r["state"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            (3, "rollback".into(), "succeeded".into()),
            (2, "apply".into(), "failed".into()),
            (1, "apply".into(), "succeeded".into())
        ]
    );
    // The check outcome per release: failed for 2, passed for 1.
    let outcome = |n: usize| history["releases"][n]["checks"].clone();
    assert_eq!(outcome(1), serde_json::json!({"passed": 0, "total": 1}));
    assert_eq!(outcome(2), serde_json::json!({"passed": 1, "total": 1}));
    let journal = Journal::open(&dir.path().join(".piceli/probe/local")).expect("journal");
    let last = journal.last_check_results().expect("results");
    assert_eq!(last.len(), 1);
    assert_eq!((last[0].passed, last[0].release), (false, Some(2)));
    // The text form: a header row, and the failed checks visible.
    let text = probe("v2", dir.path(), &sim)
        .args(["history", "-o", "text"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    let rows: Vec<&str> = text.lines().collect();
    assert!(
        rows[0].contains("RELEASE") && rows[0].contains("CHECKS"),
        "{text}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains("failed") && r.contains("FAILED 1/1")),
        "{text}"
    );
}

#[test]
fn a_first_release_has_nothing_to_roll_back_to() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    sim.map_port(NAMESPACE, WEB, 80, serve(503, "starting"))
        .expect("map port");
    let hash = hash_to_approve("v1", dir.path(), &sim);
    let out = probe("v1", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .code(1);
    let lines = lines(&out);
    let result = result(&lines);
    assert_eq!(result["error"]["code"], "PCL0130");
    assert_eq!(result["restored"], serde_json::Value::Null);
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nothing to roll back to"), "{message}");
    assert_eq!(live_image(&sim), probe::IMAGE_V1, "release 1 stays");
}

#[test]
fn a_rollout_that_never_gets_ready_ends_not_ready_and_resume_continues_the_same_run() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let hash = hash_to_approve("v1", dir.path(), &sim);
    probe("v1", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .success();

    // The new pods' readiness probe gets 500: the rollout stalls.
    sim.map_port(NAMESPACE, WEB, 80, serve(500, "not yet"))
        .expect("map port");
    let hash = hash_to_approve("unready", dir.path(), &sim);
    let out = probe("unready", dir.path(), &sim)
        .args(["deploy", "--approve", &hash, "--timeout", "2"])
        .assert()
        .code(1);
    let lines = lines(&out);
    assert_eq!(result_code(&lines), "PCL0115", "{lines:?}");
    assert!(
        events(&lines, "check").is_empty(),
        "no checks before readiness"
    );
    let applied = events(&lines, "apply");
    assert_eq!(applied[0]["release"], 2);
    let run = applied[0]["run"].clone();

    // Still not ready: resuming fails the same way, in the same run.
    let out = probe("unready", dir.path(), &sim)
        .args(["deploy", "--resume", "--timeout", "2"])
        .assert()
        .code(1);
    let again = common::lines(&out);
    let resumed = events(&again, "resume");
    assert_eq!(resumed.len(), 1, "{again:?}");
    assert_eq!(resumed[0]["run"], run, "the same run");
    assert_eq!(resumed[0]["stage"], "ready");
    assert!(events(&again, "apply").is_empty(), "nothing applied again");
    assert_eq!(result_code(&again), "PCL0115");

    // The cause fixed, resume finishes the run: ready, checks pass.
    sim.unmap_port(NAMESPACE, 80);
    let out = probe("unready", dir.path(), &sim)
        .args(["deploy", "--resume"])
        .assert()
        .success();
    let done = common::lines(&out);
    assert_eq!(events(&done, "resume")[0]["run"], run);
    assert_eq!(events(&done, "check")[0]["passed"], true, "{done:?}");
    assert_eq!(result(&done)["release"], 2);
    let journal = Journal::open(&dir.path().join(".piceli/probe/local")).expect("journal");
    assert_eq!(
        journal.releases().expect("releases").len(),
        2,
        "no new release"
    );
    assert!(journal.unfinished_deploy().expect("runs").is_none());
    let nothing = probe("unready", dir.path(), &sim)
        .args(["deploy", "--resume"])
        .assert()
        .success();
    assert_eq!(
        result(&common::lines(&nothing))["run"],
        serde_json::Value::Null
    );
}

#[test]
fn a_crash_looping_rollout_ends_not_ready_and_resume_continues_the_same_run() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let hash = hash_to_approve("v1", dir.path(), &sim);
    probe("v1", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .success();

    let hash = hash_to_approve("crash", dir.path(), &sim);
    let out = probe("crash", dir.path(), &sim)
        .args(["deploy", "--approve", &hash, "--timeout", "2"])
        .assert()
        .code(1);
    let lines = lines(&out);
    assert_eq!(result_code(&lines), "PCL0115", "{lines:?}");
    assert!(
        events(&lines, "check").is_empty(),
        "no checks before readiness"
    );
    let run = events(&lines, "apply")[0]["run"].clone();
    let message = result(&lines)["error"]["message"].to_string();
    assert!(message.contains("web"), "names the workload: {message}");

    // The pods really crash-loop (restarts, CrashLoopBackOff), as the status would tell.
    let crashing = std::process::Command::new("kubectl")
        .args(["--kubeconfig", &sim.kubeconfig_path().display().to_string()])
        .args(["-n", NAMESPACE, "get", "pods", "-o", "json"])
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", dir.path().join("kube-cache"))
        .output()
        .expect("kubectl runs (it must be installed)");
    let pods: serde_json::Value = serde_json::from_slice(&crashing.stdout).expect("pods JSON");
    let waiting: Vec<String> = pods["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"].as_str())
        .map(String::from)
        .collect();
    assert!(
        waiting.iter().any(|r| r == "CrashLoopBackOff"),
        "crash-looping pods: {waiting:?}"
    );

    // Resuming continues the same run (nothing applied again) and ends the same way.
    let out = probe("crash", dir.path(), &sim)
        .args(["deploy", "--resume", "--timeout", "2"])
        .assert()
        .code(1);
    let again = common::lines(&out);
    let resumed = events(&again, "resume");
    assert_eq!(resumed.len(), 1, "{again:?}");
    assert_eq!(resumed[0]["run"], run, "the same run");
    assert!(events(&again, "apply").is_empty(), "nothing applied again");
    assert_eq!(result_code(&again), "PCL0115");
}

fn result_code(lines: &[serde_json::Value]) -> String {
    result(lines)["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn changing_only_a_check_runs_the_checks_without_applying() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let hash = hash_to_approve("v1", dir.path(), &sim);
    probe("v1", dir.path(), &sim)
        .args(["deploy", "--approve", &hash])
        .assert()
        .success();

    // No `--approve`: nothing to approve.
    let out = probe("recheck", dir.path(), &sim)
        .arg("deploy")
        .assert()
        .success();
    let lines = lines(&out);
    assert_eq!(events(&lines, "plan")[0]["changes"], false);
    let applied = events(&lines, "apply");
    assert_eq!(applied[0]["release"], serde_json::Value::Null);
    assert_eq!(applied[0]["written"], 0);
    let checks: Vec<(String, bool)> = events(&lines, "check")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["passed"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(checks, [("front".into(), true), ("answers".into(), true)]);
    assert_eq!(
        result(&lines)["release"],
        1,
        "checked against the live release"
    );
    let journal = Journal::open(&dir.path().join(".piceli/probe/local")).expect("journal");
    assert_eq!(journal.releases().expect("releases").len(), 1);
}
