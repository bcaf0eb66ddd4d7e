//! `lamps render` as a user runs it: the snapshot of the CRD (from the Rust type) and the operator's
//! objects, and the RBAC derived from the two controller declarations: a Role in the operator's
//! namespace (Lamps with status and finalizers, their ConfigMap children, the leader Lease, Events) and a
//! ClusterRole for the cluster-wide audit of ConfigMaps.

use assert_cmd::Command;
use serde_json::{Value, json};

fn lamps(args: &[&str]) -> String {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::cargo_bin("lamps")
        .expect("lamps binary")
        .env_remove("KUBECONFIG")
        .env("HOME", home.path())
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("utf-8")
}

#[test]
fn snapshot_of_the_operator_objects() {
    insta::assert_snapshot!("lamps_render", lamps(&["render"]));
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> Value {
    json!({ "apiGroups": [group], "resources": resources, "verbs": verbs })
}

#[test]
fn the_rbac_is_derived_from_the_declarations() {
    let list: Value = serde_json::from_str(&lamps(&["render", "-o", "json"])).expect("JSON");
    let items = list["items"].as_array().expect("items");
    let find = |kind: &str| {
        items
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} rendered"))
    };
    let crd = find("CustomResourceDefinition");
    assert_eq!(crd["metadata"]["name"], "lamps.example.com");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    let role = find("Role");
    assert_eq!(role["metadata"]["namespace"], "lamps-system");
    assert_eq!(
        role["rules"],
        json!([
            rule("", &["configmaps"], &["create", "delete", "patch"]),
            rule(
                "coordination.k8s.io",
                &["leases"],
                &["create", "get", "update"]
            ),
            rule("example.com", &["lamps"], &["list", "patch", "watch"]),
            rule("example.com", &["lamps/status"], &["patch"]),
        ]),
        "exactly what the runtime sends; events come from the ClusterRole"
    );
    assert_eq!(
        find("ClusterRole")["rules"],
        json!([
            rule("", &["configmaps"], &["list", "watch"]),
            rule("events.k8s.io", &["events"], &["create", "patch"]),
        ])
    );
    for binding in ["RoleBinding", "ClusterRoleBinding"] {
        assert_eq!(
            find(binding)["subjects"],
            json!([{ "kind": "ServiceAccount", "name": "lamps", "namespace": "lamps-system" }])
        );
    }
    let pod = &find("Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], true);
    let container = &pod["containers"][0];
    assert_eq!(container["env"][0]["name"], "POD_NAME");
    assert_eq!(
        container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );
    assert_eq!(
        container["args"],
        json!(["serve", "--listen", "0.0.0.0:8080"])
    );
    assert_eq!(container["readinessProbe"]["httpGet"]["scheme"], "HTTP");
    assert!(
        !items
            .iter()
            .any(|o| o["kind"] == "Service" || o["kind"] == "Certificate"),
        "controllers without webhooks need no Service and no certificate"
    );
}
