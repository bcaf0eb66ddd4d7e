//! The app binary run as a user would (`self-built deploy …`), against the local cluster and a real
//! registry (Debian's docker-registry on 127.0.0.1): `build(self)` builds this very package in the
//! repository's workspace (release, `--locked`), the plan shows the operator's digest, and once approved
//! the image is pushed — its entry point the app's binary, `serve` its command, a non-root user — and the
//! operator's Deployment runs it by digest. A second deploy builds and pushes nothing.

#[path = "../../../image/tests/support/mod.rs"]
mod support;

#[path = "../../support/deploy_events.rs"]
mod deploy_events;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use deploy_events::{event, lines, stages};
use piceli_image::{Digest, RegistryClient, Repository};
use piceli_sim::{Sim, SimConfig};
use piceli_test_support::apps;

/// The repository's workspace: where `build(self)` finds this package.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace above examples/self-built")
        .to_path_buf()
}

#[test]
fn build_self_deploys_the_apps_own_binary_as_its_operator() {
    let registry = support::LocalRegistry::start();
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    let state = dir.path().join("state");
    let registry_flag = format!("{}/sb", registry.addr);
    let kubeconfig = sim.kubeconfig_path().display().to_string();
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_self-built"));
        cmd.current_dir(dir.path())
            .env("HOME", &home)
            .env("KUBECONFIG", home.join(".kube/config"))
            .env("DOCKER_CONFIG", home.join(".docker"));
        // The release build of this package goes to the target dir the tests' app crates share, with
        // their profile: `opt-level = 0` (what is built and delivered is under test, not the binary's
        // speed; the local cluster runs no container) and no rustflags, so the dependencies another
        // app build of the run compiled are reused (piceli_test_support::apps).
        apps::cargo(&mut cmd, Path::new(env!("CARGO_TARGET_TMPDIR")));
        cmd.args(args)
            .args(["--kubeconfig", &kubeconfig, "--context", "piceli-sim"])
            .arg("--state-dir")
            .arg(&state)
            .args(["-o", "json", "--timeout", "30"]);
        if args.first() == Some(&"deploy") {
            cmd.arg("--workspace")
                .arg(workspace())
                .args(["--registry", &registry_flag]);
        }
        let mut cmd = Command::from_std(cmd);
        cmd.timeout(std::time::Duration::from_secs(3600));
        cmd
    };

    // Built (this package, by cargo), waiting for approval: the plan shows the digest, nothing pushed.
    let out = run(&["deploy"]).assert().code(3);
    let first = lines(&out);
    assert_eq!(
        stages(&first),
        ["inputs:done", "build:done", "plan:done", "approve:waiting"]
    );
    assert_eq!(event(&first, "build")["image"], "build:self-built");
    let digest = Digest::parse(event(&first, "build")["digest"].as_str().expect("digest"))
        .expect("a digest");
    let hash = event(&first, "plan")["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let repo = Repository::parse(&format!("{registry_flag}/self-built")).expect("repo");
    let client = RegistryClient::new(repo, None).expect("client");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    assert!(!rt.block_on(client.has_manifest(&digest)).expect("head"));

    // Approved: pushed, the operator's Deployment applied and ready (the sim's kubelet pulls by digest).
    let out = run(&["deploy", "--approve", &hash]).assert().success();
    let done = lines(&out);
    assert_eq!(
        stages(&done)[..6],
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:done",
            "deliver:done",
            "apply:done"
        ]
    );
    let reference = format!("{registry_flag}/self-built@{digest}");
    assert_eq!(event(&done, "deliver")["reference"], reference.as_str());
    assert_eq!(event(&done, "result")["release"], 1);

    // The image runs the app's own binary as `serve`, as a non-root user.
    let pulled = rt.block_on(client.pull(&digest)).expect("pull");
    let config: serde_json::Value =
        serde_json::from_slice(&pulled.blobs[0].bytes).expect("the image config");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/app/self-built"])
    );
    assert_eq!(config["config"]["Cmd"], serde_json::json!(["serve"]));
    let user = config["config"]["User"].as_str().expect("a user");
    assert!(
        !user.is_empty() && !user.starts_with("0:") && user != "0",
        "{user}"
    );

    // The rendered operator runs it by digest.
    let out = run(&["render"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains(&reference), "{text}");

    // No change: nothing built, nothing pushed, nothing to approve.
    let out = run(&["deploy"]).assert().success();
    let again = lines(&out);
    assert_eq!(
        stages(&again)[..5],
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:skipped",
            "deliver:skipped"
        ]
    );
    assert_eq!(event(&again, "inputs")["unchanged"], true);
    drop(sim);
    drop(registry);
}
