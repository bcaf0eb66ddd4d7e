//! The shop example (most of the DSL) renders for every target; every object parses back into its
//! k8s-openapi type; overrides apply; secret values never appear.

use assert_cmd::Command;
use piceli::k8s_openapi::api::{apps, autoscaling, batch, core, networking, policy, rbac};
use serde_json::Value;

fn render(args: &[&str]) -> (String, Vec<Value>) {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_shop"))
        .env_remove("KUBECONFIG")
        .env("HOME", home.path())
        .env("SHOP_DB_PASSWORD", "canary-7f3a9e")
        .arg("render")
        .args(args)
        .assert()
        .success();
    let yaml = String::from_utf8(out.get_output().stdout.clone()).expect("utf-8");
    let docs = serde_saphyr::from_multiple(&yaml).expect("valid YAML");
    (yaml, docs)
}

/// Deserialize an object into the k8s-openapi type of its kind (proves the shape is right).
fn parse_typed(doc: &Value) -> Result<(), String> {
    fn as_<T: serde::de::DeserializeOwned>(doc: &Value) -> Result<(), String> {
        serde_json::from_value::<T>(doc.clone())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    match doc["kind"].as_str().unwrap_or_default() {
        "Namespace" => as_::<core::v1::Namespace>(doc),
        "ServiceAccount" => as_::<core::v1::ServiceAccount>(doc),
        "ConfigMap" => as_::<core::v1::ConfigMap>(doc),
        "Secret" => as_::<core::v1::Secret>(doc),
        "PersistentVolumeClaim" => as_::<core::v1::PersistentVolumeClaim>(doc),
        "Service" => as_::<core::v1::Service>(doc),
        "Deployment" => as_::<apps::v1::Deployment>(doc),
        "StatefulSet" => as_::<apps::v1::StatefulSet>(doc),
        "DaemonSet" => as_::<apps::v1::DaemonSet>(doc),
        "Job" => as_::<batch::v1::Job>(doc),
        "CronJob" => as_::<batch::v1::CronJob>(doc),
        "Ingress" => as_::<networking::v1::Ingress>(doc),
        "NetworkPolicy" => as_::<networking::v1::NetworkPolicy>(doc),
        "HorizontalPodAutoscaler" => as_::<autoscaling::v2::HorizontalPodAutoscaler>(doc),
        "PodDisruptionBudget" => as_::<policy::v1::PodDisruptionBudget>(doc),
        "Role" => as_::<rbac::v1::Role>(doc),
        "RoleBinding" => as_::<rbac::v1::RoleBinding>(doc),
        "ClusterRole" => as_::<rbac::v1::ClusterRole>(doc),
        other => Err(format!("unexpected kind {other}")),
    }
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind}/{name} not rendered"))
}

#[test]
fn every_target_renders_typed_objects() {
    for target in ["local", "staging", "prod"] {
        let (_, docs) = render(&["--target", target]);
        assert_eq!(docs.len(), 26, "{target}");
        for d in &docs {
            parse_typed(d).unwrap_or_else(|e| panic!("{target}: {}: {e}", d["kind"]));
            assert_eq!(d["metadata"]["labels"]["app.kubernetes.io/name"], "shop");
            assert_eq!(
                d["metadata"]["labels"]["app.kubernetes.io/managed-by"],
                "piceli"
            );
        }
    }
}

#[test]
fn overrides_apply_per_target() {
    let (_, local) = render(&["--target", "local"]);
    let (_, prod) = render(&["--target", "prod"]);
    let (_, staging) = render(&["--target", "staging"]);
    assert_eq!(find(&local, "Deployment", "api")["spec"]["replicas"], 3);
    assert_eq!(find(&prod, "Deployment", "api")["spec"]["replicas"], 6);
    let limits = &find(&prod, "Deployment", "api")["spec"]["template"]["spec"]["containers"][0]["resources"]
        ["limits"];
    assert_eq!(limits["memory"], "1Gi");
    let env =
        &find(&staging, "Deployment", "api")["spec"]["template"]["spec"]["containers"][0]["env"];
    assert!(env.as_array().is_some_and(|e| {
        e.iter()
            .any(|v| v["name"] == "LOG_LEVEL" && v["value"] == "debug")
    }));
    assert_eq!(find(&prod, "Namespace", "shop")["kind"], "Namespace");
    assert_eq!(
        find(&staging, "Deployment", "api")["metadata"]["namespace"],
        "shop-staging"
    );
}

#[test]
fn rust_values_files_and_includes_are_rendered() {
    let (_, docs) = render(&[]);
    let api = find(&docs, "Deployment", "api");
    let image = api["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default();
    assert!(
        image.starts_with("ghcr.io/example/shop-api:2.4.1@sha256:"),
        "{image}"
    );
    let settings = find(&docs, "ConfigMap", "settings");
    assert!(
        settings["data"]["nginx.conf"]
            .as_str()
            .unwrap_or_default()
            .contains("proxy_pass http://api:8000;")
    );
    // Included YAML and Rust-built objects carry our labels and the target namespace.
    let legacy = find(&docs, "ConfigMap", "legacy-settings");
    assert_eq!(legacy["metadata"]["namespace"], "shop");
    let reader = find(&docs, "ClusterRole", "shop-legacy-reader");
    assert!(
        reader["metadata"].get("namespace").is_none(),
        "cluster-scoped kinds get no namespace"
    );
    let info = find(&docs, "ConfigMap", "shop-build-info");
    assert_eq!(info["data"]["version"], "0.1.0");
}

#[test]
fn secret_values_never_appear() {
    let (yaml, docs) = render(&[]);
    assert!(!yaml.contains("canary-7f3a9e"));
    let secret = find(&docs, "Secret", "db-credentials");
    assert_eq!(
        secret["stringData"]["password"],
        "<redacted: from_env SHOP_DB_PASSWORD>"
    );
    let (json, _) = {
        let home = tempfile::tempdir().expect("temp dir");
        let out = Command::new(env!("CARGO_BIN_EXE_shop"))
            .env("HOME", home.path())
            .env("SHOP_DB_PASSWORD", "canary-7f3a9e")
            .args(["render", "-o", "json"])
            .assert()
            .success();
        (
            String::from_utf8_lossy(&out.get_output().stdout).to_string(),
            (),
        )
    };
    assert!(!json.contains("canary-7f3a9e"));
}

#[test]
fn a_target_kubeconfig_that_does_not_exist_still_renders() {
    // staging's kubeconfig file ("staging.kubeconfig") does not exist; render never opens it.
    let (_, docs) = render(&["--target", "staging"]);
    assert!(!docs.is_empty());
}
