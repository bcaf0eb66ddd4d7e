//! `piceli new` without `--operator`, as a user runs it: the app depends on piceli without its `operator`
//! feature, so its dependency graph has no kube-runtime (a first build compiles only the deploy half); a
//! controller declared in it then fails the build with PCL0240 at the declaration, naming the feature to
//! turn on, and no other error.

use std::path::Path;
use std::process::{Command, Output};

use piceli_test_support::apps;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_new_app_has_no_operator_half_and_a_controller_names_the_feature() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let app = tmp.join("new-app").join("plain");
    if app.exists() {
        std::fs::remove_dir_all(&app).expect("remove the last run's crate");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .arg("new")
        .arg(&app)
        .arg("--piceli-path")
        .arg(&root)
        .output()
        .expect("piceli new runs");
    assert!(out.status.success(), "piceli new: {}", text(&out));
    let manifest = std::fs::read_to_string(app.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains("piceli = { path = ") && !manifest.contains("operator"),
        "{manifest}"
    );
    std::fs::copy(root.join("Cargo.lock"), app.join("Cargo.lock")).expect("copy Cargo.lock");

    // No kube-runtime (nor the webhook server's HTTP/2) in the graph of an app that only deploys.
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for package in ["kube-runtime", "h2"] {
        let tree = Command::new(&program)
            .current_dir(&app)
            .args(["tree", "--offline", "-e", "normal", "-i", package])
            .output()
            .expect("cargo tree runs");
        assert!(
            !tree.status.success()
                && String::from_utf8_lossy(&tree.stderr).contains("did not match any packages"),
            "{package} is in a new app's graph:\n{}",
            text(&tree)
        );
    }

    // A controller: PCL0240 at `controller`, naming the feature, and nothing else.
    let main = std::fs::read_to_string(app.join("src/main.rs")).expect("main.rs");
    let with_controller = main.replacen(
        "    check http(web, \"/\", expect: 200);",
        "    check http(web, \"/\", expect: 200);\n    operator audit { image: \"docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d\" }\n    controller audit on configmaps => audit;",
        1,
    );
    assert_ne!(main, with_controller, "the starter app changed: {main}");
    let with_controller = format!(
        "{with_controller}\nasync fn audit(\n    _: std::sync::Arc<piceli::k8s_openapi::api::core::v1::ConfigMap>,\n    _: (),\n) {{}}\n"
    );
    std::fs::write(app.join("src/main.rs"), with_controller).expect("write main.rs");
    let built = apps::cargo_build(&app, tmp, &["--offline", "--quiet"])
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(
        !built.status.success(),
        "a controller built without the operator feature"
    );
    assert!(
        stderr.contains(
            "PCL0240: this app declares a controller, but piceli's `operator` feature is off"
        ) && stderr.contains("features = [\"operator\"]"),
        "{stderr}"
    );
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(
        errors.len(),
        2,
        "PCL0240 and cargo's `could not compile`, nothing else:\n{stderr}"
    );
}
