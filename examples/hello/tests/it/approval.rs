//! Approval through the binary, as a user or CI runs it: a unique hash prefix of 12+ digits approves, a
//! short or non-hex one is refused (PCL0145), a plan made for one namespace is refused for another with both
//! named (PCL0141, exit 2), `plan --changes-only` hides unchanged objects, and `stop` with nothing running
//! requests nothing.

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
        .env("KUBECACHEDIR", dir.join("kubecache"))
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

fn json(out: &assert_cmd::assert::Assert) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    serde_json::from_str(text.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn approval_by_prefix_and_for_the_planned_namespace_only() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let kc = sim.kubeconfig_path().display().to_string();
    let flags = [
        "--kubeconfig",
        &kc,
        "--context",
        sim.context(),
        "--timeout",
        "60",
    ];

    let out = hello(dir.path())
        .args(["plan", "--namespace", "g-one", "-o", "json"])
        .args(flags)
        .assert()
        .code(3);
    let hash = json(&out)["hash"].as_str().expect("hash").to_string();

    // Applied for another namespace: refused, both named, nothing written.
    let out = hello(dir.path())
        .args(["apply", "--namespace", "g-two", "--approve", &hash])
        .args(flags)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("PCL0141") && err.contains("g-one") && err.contains("g-two"),
        "{err}"
    );

    // Too short, not hex: refused with a code of its own.
    for bad in [&hash[..8], "not-a-hash-at-all"] {
        let out = hello(dir.path())
            .args([
                "apply",
                "--namespace",
                "g-one",
                "--approve",
                bad,
                "-o",
                "json",
            ])
            .args(flags)
            .assert()
            .code(2);
        assert_eq!(json(&out)["error"]["code"], "PCL0145", "{bad}");
    }

    // A 12-digit prefix approves.
    let out = hello(dir.path())
        .args([
            "apply",
            "--namespace",
            "g-one",
            "--approve",
            &hash[..12],
            "-o",
            "json",
        ])
        .args(flags)
        .assert()
        .success();
    assert_eq!(json(&out)["release"], 1);

    // Nothing to show but unchanged objects: --changes-only lists none of them.
    let out = hello(dir.path())
        .args(["plan", "--namespace", "g-one", "--changes-only"])
        .args(flags)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(!text.contains("unchanged Deployment"), "{text}");
    assert!(
        text.contains("0 to create") && text.contains("unchanged."),
        "{text}"
    );
    let out = hello(dir.path())
        .args(["plan", "--namespace", "g-one"])
        .args(flags)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("unchanged Deployment"), "{text}");

    // `stop` with nothing running requests nothing.
    let out = hello(dir.path())
        .args(["stop", "--namespace", "g-one", "-o", "json"])
        .args(flags)
        .assert()
        .success();
    assert_eq!(json(&out)["stop_requested"], false);
}
