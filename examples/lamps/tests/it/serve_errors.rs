//! `lamps serve` refused before it serves anything, as a user meets it: a kubeconfig that cannot be read
//! is reported with the engine's own code and help (PCL0103), not flattened into "no cluster"; a
//! `RUST_LOG` that does not parse is PCL0224, exit 2.

use assert_cmd::Command;

#[test]
fn an_unreadable_kubeconfig_keeps_its_own_code() {
    let home = tempfile::tempdir().expect("temp dir");
    let missing = home.path().join("no-such-kubeconfig");
    let out = Command::cargo_bin("lamps")
        .expect("lamps binary")
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(&missing)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("error[PCL0103]"), "{stderr}");
    assert!(!stderr.contains("PCL0176"), "{stderr}");
    assert!(
        stderr.contains("help: pass `--kubeconfig PATH`"),
        "{stderr}"
    );
}

#[test]
fn a_log_filter_that_does_not_parse_is_refused() {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::cargo_bin("lamps")
        .expect("lamps binary")
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home.path())
        .env("RUST_LOG", "piceli_runtime=loud")
        .args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("error[PCL0224]"), "{stderr}");
    assert!(stderr.contains("piceli_runtime=loud"), "{stderr}");
}
