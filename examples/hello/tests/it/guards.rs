//! Input the engine must refuse before doing anything, and a journal it must not paper over: a damaged
//! (emptied) journal makes `resume`, `status` and `stop` fail with its code; `--timeout` is bounded at
//! parse time; `--namespace` is validated before any cluster call; a release that does not exist has a
//! code of its own. Each drives the built `hello` binary against the local cluster.

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

/// `--kubeconfig K --context CONTEXT --state-dir STATE -o json`.
fn flags(sim: &Cluster, state: &Path) -> Vec<String> {
    [
        "--kubeconfig",
        &sim.kubeconfig_path().display().to_string(),
        "--context",
        sim.context(),
        "--state-dir",
        &state.display().to_string(),
        "-o",
        "json",
    ]
    .map(String::from)
    .to_vec()
}

/// The `error` object of a command's JSON output (the last line: `deploy` streams events first).
fn error_of(out: &assert_cmd::assert::Assert) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let last = stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value =
        serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    v["error"].clone()
}

async fn namespaces(sim: &Cluster) -> Vec<String> {
    use piceli::k8s_openapi::api::core::v1::Namespace;
    kube::api::Api::<Namespace>::all(sim.client().expect("client"))
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect()
}

#[test]
fn an_emptied_journal_fails_resume_status_and_stop_with_its_code() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    // A real journal with a release, then emptied (a full disk, a bad copy, `> journal.db`).
    let hash = {
        let out = hello(dir.path())
            .arg("plan")
            .args(flags(&sim, &state))
            .assert()
            .code(3);
        let plan: serde_json::Value =
            serde_json::from_slice(&out.get_output().stdout).expect("plan JSON");
        plan["hash"].as_str().expect("hash").to_string()
    };
    hello(dir.path())
        .args(["apply", "--approve", &hash])
        .args(flags(&sim, &state))
        .assert()
        .success();
    let db = state.join("journal.db");
    std::fs::write(&db, b"").expect("empty the journal");
    for command in ["resume", "status", "stop", "history"] {
        let out = hello(dir.path())
            .arg(command)
            .args(flags(&sim, &state))
            .assert()
            .code(2);
        let error = error_of(&out);
        assert_eq!(error["code"], "PCL0150", "{command}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("0 bytes"),
            "{command}: {error}"
        );
        assert!(
            error["help"]
                .as_str()
                .unwrap_or_default()
                .contains("backup"),
            "{command}: {error}"
        );
        assert_eq!(
            std::fs::metadata(&db).expect("journal").len(),
            0,
            "{command} left the file alone"
        );
    }
}

#[test]
fn a_timeout_beyond_a_day_is_refused_at_parse_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    let out = hello(dir.path())
        .args(["apply", "--approve", &"0".repeat(64)])
        .args(["--timeout", "18446744073709551615", "--state-dir"])
        .arg(&state)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("--timeout"), "{stderr}");
    assert!(stderr.contains("0..=86400"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!state.exists(), "nothing was created");
    // The bound itself is accepted.
    hello(dir.path())
        .args(["render", "--timeout", "86400"])
        .assert()
        .success();
}

#[test]
fn a_namespace_that_is_a_path_is_refused_before_any_cluster_call() {
    let sim = Cluster::start();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let before = rt.block_on(namespaces(&sim));
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    for command in [&["plan"][..], &["deploy"], &["status"], &["resume"]] {
        let out = hello(dir.path())
            .args(command)
            .args(["--namespace", "../../etc"])
            .args(flags(&sim, &state))
            .assert()
            .code(2);
        let error = error_of(&out);
        assert_eq!(error["code"], "PCL0151", "{command:?}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("`--namespace`"), "{message}");
        assert!(message.contains("../../etc"), "{message}");
        assert!(
            error["help"]
                .as_str()
                .unwrap_or_default()
                .contains("DNS-1123"),
            "{error}"
        );
        assert!(
            !state.exists(),
            "{command:?}: the state directory was created"
        );
    }
    // `--target` names only a declared target: anything else is refused just as early.
    let out = hello(dir.path())
        .args(["plan", "--target", "../../etc"])
        .args(flags(&sim, &state))
        .assert()
        .code(2);
    assert_eq!(error_of(&out)["code"], "PCL0102");
    assert!(!state.exists(), "--target: the state directory was created");
    let out = hello(dir.path())
        .args(["render", "--namespace", "Not_A_Namespace"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0151"), "{stderr}");
    assert_eq!(rt.block_on(namespaces(&sim)), before, "nothing written");
}

#[test]
fn a_release_that_does_not_exist_has_its_own_code() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    for command in [
        &["rollback", "999"][..],
        &["diff", "999", "1"],
        &["diff", "999"],
        &["rollback"],
    ] {
        let out = hello(dir.path())
            .args(command)
            .args(flags(&sim, &state))
            .assert()
            .code(2);
        let error = error_of(&out);
        assert_eq!(error["code"], "PCL0152", "{command:?}: {error}");
        assert!(
            error["help"]
                .as_str()
                .unwrap_or_default()
                .contains("history"),
            "{command:?}: {error}"
        );
    }
}

#[test]
fn a_command_that_fails_before_reaching_the_cluster_leaves_no_state_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    // A kubeconfig that does not exist: the connection cannot even be configured.
    let out = hello(dir.path())
        .args(["plan", "--kubeconfig"])
        .arg(dir.path().join("missing.kubeconfig"))
        .args(["--context", "nowhere", "--state-dir"])
        .arg(&state)
        .args(["-o", "json"])
        .assert()
        .failure();
    let error = error_of(&out);
    assert!(
        error["code"].as_str().is_some_and(|c| c.starts_with("PCL")),
        "{error}"
    );
    assert!(
        !state.exists(),
        "no state directory for a run that never reached a cluster"
    );
    // The default state directory (`.piceli/hello/local`) either.
    let out = hello(dir.path())
        .args(["status", "--kubeconfig"])
        .arg(dir.path().join("missing.kubeconfig"))
        .args(["--context", "nowhere", "-o", "json"])
        .assert()
        .failure();
    assert!(error_of(&out)["code"].is_string());
    assert!(
        !dir.path().join(".piceli").exists(),
        "no default state directory either"
    );
}

#[test]
fn an_env_file_that_cannot_be_read_or_parsed_is_refused_before_any_cluster_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let bad = dir.path().join("bad.env");
    std::fs::write(
        &bad,
        "# secrets\nAPI_KEY=s3cret-value\nthis line has no equals sign\n",
    )
    .expect("write");
    // No cluster at all: the kubeconfig does not exist, so any attempt to connect would fail differently.
    for (file, want) in [
        (
            bad.clone(),
            format!("{}:3: expected `KEY=VALUE`", bad.display()),
        ),
        (
            dir.path().join("missing.env"),
            format!(
                "cannot read env file `{}`",
                dir.path().join("missing.env").display()
            ),
        ),
    ] {
        let out = hello(dir.path())
            .args(["plan", "--env-file"])
            .arg(&file)
            .args(["--kubeconfig"])
            .arg(dir.path().join("missing.kubeconfig"))
            .args(["--context", "nowhere", "--state-dir"])
            .arg(&state)
            .args(["-o", "json"])
            .assert()
            .code(2);
        let error = error_of(&out);
        assert_eq!(error["code"], "PCL0157", "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(&want), "{message}");
        assert!(!message.contains("s3cret"), "never a value: {message}");
        assert!(!state.exists(), "nothing written");
    }
}
