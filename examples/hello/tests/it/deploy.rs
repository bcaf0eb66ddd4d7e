//! `deploy` of hello: the hash first (exit 3), then apply, readiness and the http check through a port
//! forward, then a no-change deploy. On both clusters: the local one answers 200 when no port is mapped;
//! on the real control plane kwok's kubelet API forwards every pod port to a static responder
//! (scripts/real-cluster.sh).

use assert_cmd::Command;
use piceli_test_support::Cluster;
use std::path::Path;

fn hello(dir: &Path) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello"));
    cmd.current_dir(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", home.join(".kube/config"))
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

/// The events of a `deploy -o json` run (progress events left out: see [`progress`]; the end of each
/// stage: see [`stages`]).
fn lines(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    all_lines(out)
        .into_iter()
        .filter(|l| l["event"] != "progress" && l["event"] != "stage")
        .collect()
}

/// `stage:outcome` of each stage a `deploy -o json` run streamed.
fn stages(out: &assert_cmd::assert::Assert) -> Vec<String> {
    all_lines(out)
        .into_iter()
        .filter(|l| l["event"] == "stage")
        .map(|l| {
            format!(
                "{}:{}",
                l["stage"].as_str().unwrap_or("?"),
                l["outcome"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

fn all_lines(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The readiness progress events of a run.
fn progress(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    all_lines(out)
        .into_iter()
        .filter(|l| l["event"] == "progress")
        .collect()
}

fn events(lines: &[serde_json::Value]) -> Vec<&str> {
    lines
        .iter()
        .map(|l| l["event"].as_str().unwrap_or("?"))
        .collect()
}

#[test]
fn deploy_needs_the_hash_then_applies_waits_and_checks() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let kc = cluster.kubeconfig_path().display().to_string();
    let context = cluster.context().to_string();
    let flags = ["--kubeconfig", &kc, "--context", &context, "-o", "json"];

    let out = hello(dir.path()).arg("deploy").args(flags).assert().code(3);
    let first = lines(&out);
    assert_eq!(events(&first), ["plan", "result"]);
    assert_eq!(
        stages(&out),
        [
            "inputs:skipped",
            "build:skipped",
            "plan:done",
            "approve:waiting"
        ]
    );
    let hash = first[0]["hash"].as_str().expect("hash").to_string();
    assert_eq!(first[1]["approval_required"], true);
    assert_eq!(first[1]["hash"], hash.as_str());
    assert_eq!(first[1]["exit"], 3);

    let wrong = hello(dir.path())
        .args(["deploy", "--approve", &"0".repeat(64)])
        .args(flags)
        .assert()
        .code(2);
    let wrong = lines(&wrong);
    assert_eq!(wrong.last().expect("result")["error"]["code"], "PCL0131");

    let out = hello(dir.path())
        .args(["deploy", "--approve", &hash])
        .args(flags)
        .assert()
        .success();
    let done = lines(&out);
    assert_eq!(events(&done), ["plan", "apply", "ready", "check", "result"]);
    assert_eq!(
        stages(&out),
        [
            "inputs:skipped",
            "build:skipped",
            "plan:done",
            "approve:done",
            "deliver:skipped",
            "apply:done",
            "ready:done",
            "checks:done"
        ]
    );
    // JSON lines carry the readiness progress: the Deployment, until it is ready.
    let waits = progress(&out);
    let last = waits.last().expect("progress events");
    assert_eq!(last["object"], "Deployment/hello/web", "{waits:?}");
    assert_eq!(
        (
            last["done"].clone(),
            last["ready"].clone(),
            last["desired"].clone()
        ),
        (true.into(), 2.into(), 2.into())
    );
    assert_eq!(done[1]["release"], 1);
    assert_eq!(done[3]["name"], "http-web");
    assert_eq!(done[3]["passed"], true, "{:?}", done[3]);
    assert_eq!(done[4]["ok"], true);
    assert_eq!(done[4]["release"], 1);

    // Nothing changed: no approval, nothing applied, the check runs again.
    let out = hello(dir.path())
        .arg("deploy")
        .args(flags)
        .assert()
        .success();
    let again = lines(&out);
    assert_eq!(
        events(&again),
        ["plan", "apply", "ready", "check", "result"]
    );
    assert_eq!(again[0]["changes"], false);
    assert_eq!(again[1]["release"], serde_json::Value::Null);
    assert_eq!(again[3]["passed"], true);

    // Text mode reads as progress; `check` runs the same check on its own.
    let out = hello(dir.path())
        .args(["deploy", "--kubeconfig", &kc, "--context", &context])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("Nothing to apply: running the checks."),
        "{text}"
    );
    assert!(text.contains("ok   http-web (http, 1 attempt(s)"), "{text}");
    assert!(text.contains("All 1 check(s) passed."), "{text}");
    hello(dir.path())
        .args(["check", "--kubeconfig", &kc, "--context", &context])
        .assert()
        .success();

    // help-json states the approval rules.
    let out = hello(dir.path()).arg("help-json").assert().success();
    let help: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    let command = |name: &str| {
        help["commands"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == name))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(command("deploy")["requires_approval"], true);
    assert!(
        command("deploy")["touches_cluster"]
            .as_str()
            .unwrap_or_default()
            .contains("needs no approval")
    );
    assert_eq!(command("check")["requires_approval"], false);
}
