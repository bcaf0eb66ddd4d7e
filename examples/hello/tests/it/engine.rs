//! The hello binary's plan/apply as a user or CI runs them, against the local API server: exit codes,
//! the JSON contract, and that no command reads `~/.kube/config` or `KUBECONFIG`.

use assert_cmd::Command;
use piceli_test_support::Cluster;
use std::path::Path;

/// The hello binary in `dir`, with HOME holding a poisoned ~/.kube/config and KUBECONFIG pointing at it:
/// any attempt to read them fails loudly.
fn hello(dir: &Path) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello"));
    cmd.current_dir(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", home.join(".kube/config"));
    cmd
}

fn json(out: &assert_cmd::assert::Assert) -> serde_json::Value {
    serde_json::from_slice(&out.get_output().stdout).expect("one JSON document on stdout")
}

#[test]
fn plan_approve_apply_with_exit_codes_and_json() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let kc = sim.kubeconfig_path().display().to_string();
    let flags = [
        "--kubeconfig",
        kc.as_str(),
        "--context",
        sim.context(),
        "-o",
        "json",
    ];

    let plan = hello(dir.path()).arg("plan").args(flags).assert().code(3);
    let plan = json(&plan);
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let actions: Vec<(String, String)> = plan["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|a| {
            (
                a["kind"].as_str().unwrap_or_default().into(),
                a["action"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("Namespace".into(), "create".into()),
            ("Deployment".into(), "create".into()),
            ("Service".into(), "create".into())
        ]
    );

    let wrong = hello(dir.path())
        .args(["apply", "--approve", &"f".repeat(64)])
        .args(flags)
        .assert()
        .code(2);
    assert_eq!(json(&wrong)["error"]["code"], "PCL0106");

    let applied = hello(dir.path())
        .args(["apply", "--approve", &hash])
        .args(flags)
        .assert()
        .success();
    assert_eq!(json(&applied)["release"], 1);

    let again = hello(dir.path()).arg("plan").args(flags).assert().success();
    let again = json(&again);
    assert_eq!(again["changes"], false);
    assert!(
        again["actions"]
            .as_array()
            .expect("actions")
            .iter()
            .all(|a| a["action"] == "unchanged")
    );

    let history = hello(dir.path())
        .arg("history")
        .args(flags)
        .assert()
        .success();
    let history = json(&history);
    assert_eq!(history["releases"][0]["state"], "succeeded");
    let approval = &history["releases"][0]["approval"];
    assert_eq!(approval["kind"], "approved", "{history}");
    assert_eq!(
        approval["command"],
        format!("apply --approve {hash}"),
        "the command that approved the release: {history}"
    );
    // The state directory is the documented default, under the working directory.
    assert!(dir.path().join(".piceli/hello/local/journal.db").exists());
}

#[test]
fn the_local_target_never_falls_back_to_kubeconfig_or_home() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = hello(dir.path()).arg("plan").assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0103"), "{stderr}");
    assert!(
        stderr.contains(".piceli/local/kubeconfig"),
        "names the file it needs: {stderr}"
    );
    assert!(
        stderr.contains("piceli sim start"),
        "says how to get it: {stderr}"
    );
    assert!(
        !stderr.contains("home/.kube/config"),
        "never tried the poisoned files: {stderr}"
    );
}

#[test]
fn a_context_the_kubeconfig_lacks_is_an_error_not_a_fallback() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let kc = sim.kubeconfig_path().display().to_string();
    let out = hello(dir.path())
        .args(["plan", "--kubeconfig", &kc, "--context", "prod"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0104"), "{stderr}");
}
