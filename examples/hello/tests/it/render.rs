//! `hello render` as a user runs it: the snapshot of its YAML, the YAML parses back into k8s-openapi
//! types, output is byte-identical across runs, and no kubeconfig is ever read.

use assert_cmd::Command;
use piceli::k8s_openapi::api::apps::v1::Deployment;
use piceli::k8s_openapi::api::core::v1::{Namespace, Service};

/// The hello binary with a clean environment: no KUBECONFIG, HOME in an empty temp dir.
fn hello(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello"));
    cmd.env_remove("KUBECONFIG").env("HOME", home);
    cmd
}

fn render(args: &[&str]) -> String {
    let home = tempfile::tempdir().expect("temp dir");
    let out = hello(home.path())
        .arg("render")
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("utf-8")
}

#[test]
fn snapshot_of_the_yaml() {
    insta::assert_snapshot!("hello_render", render(&[]));
}

#[test]
fn yaml_parses_back_into_kubernetes_types() {
    let yaml = render(&[]);
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).expect("valid YAML");
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["Namespace", "Deployment", "Service"]);
    let ns: Namespace = serde_json::from_value(docs[0].clone()).expect("Namespace");
    assert_eq!(ns.metadata.name.as_deref(), Some("hello"));
    let deploy: Deployment = serde_json::from_value(docs[1].clone()).expect("Deployment");
    let spec = deploy.spec.expect("spec");
    assert_eq!(spec.replicas, Some(2));
    let container = &spec.template.spec.expect("pod spec").containers[0];
    assert!(
        container
            .image
            .as_deref()
            .unwrap_or_default()
            .contains("@sha256:")
    );
    let svc: Service = serde_json::from_value(docs[2].clone()).expect("Service");
    let labels = svc.metadata.labels.expect("labels");
    assert_eq!(
        labels.get("app.kubernetes.io/name").map(String::as_str),
        Some("hello")
    );
    assert_eq!(
        labels
            .get("app.kubernetes.io/managed-by")
            .map(String::as_str),
        Some("piceli")
    );
    assert_eq!(
        svc.spec.expect("spec").selector,
        deploy.metadata.labels.map(|mut l| {
            l.retain(|k, _| k == "app.kubernetes.io/name");
            l.insert("app.kubernetes.io/component".into(), "web".into());
            l
        })
    );
}

#[test]
fn json_output_is_a_list() {
    let json: serde_json::Value =
        serde_json::from_str(&render(&["--output", "json"])).expect("JSON");
    assert_eq!(json["kind"], "List");
    assert_eq!(json["items"].as_array().map(Vec::len), Some(3));
}

#[test]
fn rendering_twice_is_byte_identical() {
    assert_eq!(render(&[]), render(&[]));
    assert_eq!(render(&["-o", "json"]), render(&["-o", "json"]));
}

#[test]
fn namespace_flag_moves_objects() {
    let yaml = render(&["--namespace", "elsewhere"]);
    assert!(yaml.contains("namespace: elsewhere"));
    assert!(!yaml.contains("namespace: hello"));
}

#[test]
fn never_reads_a_kubeconfig() {
    // A kubeconfig path that does not exist, a poisoned ~/.kube/config and KUBECONFIG: render ignores all.
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(home.path().join(".kube")).expect("mkdir");
    std::fs::write(
        home.path().join(".kube/config"),
        "this: [is not a kubeconfig",
    )
    .expect("write");
    let out = hello(home.path())
        .env("KUBECONFIG", home.path().join(".kube/config"))
        .args([
            "render",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "--context",
            "nope",
        ])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        render(&[])
    );
}

#[test]
fn unknown_target_is_rejected_with_a_code() {
    let home = tempfile::tempdir().expect("temp dir");
    let out = hello(home.path())
        .args(["render", "--target", "prod"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0102"), "{stderr}");
    assert!(stderr.contains("help: pass one of: local"), "{stderr}");
}

#[test]
fn explain_and_help_json() {
    let home = tempfile::tempdir().expect("temp dir");
    let out = hello(home.path())
        .args(["explain", "PCL0016"])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).contains("image not pinned by digest")
    );
    let out = hello(home.path()).arg("help-json").assert().success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(json["app"], "hello");
    let render = json["commands"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "render"))
        .cloned();
    assert_eq!(
        render.map(|r| r["touches_cluster"].clone()),
        Some(serde_json::json!("none"))
    );
}

#[test]
fn completions_and_man_page_of_the_app_binary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = hello(dir.path())
        .args(["completions", "fish"])
        .assert()
        .success();
    let fish = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        fish.contains("deploy") && fish.contains("approve"),
        "{fish}"
    );
    let out = hello(dir.path()).arg("man").assert().success();
    let man = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(man.contains(".TH hello"), "{man}");
    assert!(man.contains("rollback"), "{man}");
}
