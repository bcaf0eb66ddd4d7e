//! `guard render` as a user runs it: the snapshot of the operator's objects in apply order, the
//! Containerfile, and the shape a cluster needs (no RBAC for pure webhooks, the CA injected by
//! cert-manager, the operator's own namespace and kube-system never admitted through it).

use assert_cmd::Command;
use serde_json::Value;

fn guard(args: &[&str]) -> String {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::cargo_bin("guard")
        .expect("guard binary")
        .env_remove("KUBECONFIG")
        .env("HOME", home.path())
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("utf-8")
}

#[test]
fn snapshot_of_the_operator_objects() {
    insta::assert_snapshot!("guard_render", guard(&["render"]));
}

#[test]
fn snapshot_of_the_containerfile() {
    insta::assert_snapshot!("guard_containerfile", guard(&["render", "--containerfile"]));
}

#[test]
fn objects_come_in_apply_order_with_least_privilege() {
    let list: Value = serde_json::from_str(&guard(&["render", "-o", "json"])).expect("JSON");
    let items = list["items"].as_array().expect("items");
    let kinds: Vec<&str> = items.iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            // The Tenant's CRD, included from its Rust type: applied right after the namespace.
            "CustomResourceDefinition",
            "ServiceAccount",
            "Issuer",
            "Certificate",
            "Issuer",
            "Certificate",
            "Deployment",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "Service",
            "PodDisruptionBudget",
        ]
    );
    assert!(
        !kinds.iter().any(|k| k.contains("Role")),
        "pure webhooks need no RBAC"
    );
    let of_kind = |kind: &str| {
        items
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("a {kind}"))
    };
    let deployment = of_kind("Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["args"], serde_json::json!(["serve"]));
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(
        pod["containers"][0]["readinessProbe"]["httpGet"]["path"],
        "/readyz"
    );
    // The Pod Security Standard "restricted" profile, and spread over nodes with 2 replicas.
    let container = &pod["containers"][0];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(
        container["securityContext"]["capabilities"]["drop"],
        serde_json::json!(["ALL"])
    );
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
            ["topologyKey"],
        "kubernetes.io/hostname"
    );
    assert_eq!(of_kind("PodDisruptionBudget")["spec"]["maxUnavailable"], 1);
    let service = of_kind("Service");
    assert_eq!(service["spec"]["ports"][0]["port"], 443);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "https");
    assert_eq!(container["ports"][0]["name"], "https");
    assert_eq!(container["ports"][0]["containerPort"], 8443);

    let validating = of_kind("ValidatingWebhookConfiguration");
    for hook in validating["webhooks"].as_array().expect("webhooks") {
        let excluded = &hook["namespaceSelector"]["matchExpressions"][0];
        assert_eq!(excluded["operator"], "NotIn");
        assert_eq!(
            excluded["values"],
            serde_json::json!(["guard-system", "kube-system"])
        );
        assert_eq!(hook["sideEffects"], "None");
        assert_eq!(hook["matchPolicy"], "Equivalent");
        assert_eq!(hook["admissionReviewVersions"], serde_json::json!(["v1"]));
    }
    assert_eq!(
        validating["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "guard-system/guard-tls"
    );
    let no_latest = &validating["webhooks"][0];
    assert_eq!(no_latest["failurePolicy"], "Fail", "the default");
    assert_eq!(no_latest["timeoutSeconds"], 10, "the default");
    let no_secrets = &validating["webhooks"][1];
    assert_eq!(no_secrets["failurePolicy"], "Ignore");
    assert_eq!(no_secrets["timeoutSeconds"], 5);
    assert_eq!(no_secrets["namespaceSelector"]["matchLabels"]["team"], "a");

    // The webhooks on the app's own Tenant resource carry its CRD's group, version, plural and scope.
    let crd = of_kind("CustomResourceDefinition");
    assert_eq!(crd["metadata"]["name"], "tenants.guard.example.com");
    let mutating = of_kind("MutatingWebhookConfiguration");
    for (config, name) in [
        (validating, "tenant-owner.guard.piceli.dev"),
        (mutating, "tenant-defaults.guard.piceli.dev"),
    ] {
        let hook = config["webhooks"]
            .as_array()
            .expect("webhooks")
            .iter()
            .find(|h| h["name"] == name)
            .unwrap_or_else(|| panic!("the webhook {name}"));
        let rule = &hook["rules"][0];
        assert_eq!(rule["apiGroups"], serde_json::json!(["guard.example.com"]));
        assert_eq!(rule["apiVersions"], serde_json::json!(["v1"]));
        assert_eq!(rule["resources"], serde_json::json!(["tenants"]));
        assert_eq!(rule["scope"], "Namespaced");
        assert_eq!(
            hook["clientConfig"]["service"]["path"],
            format!(
                "/{}/{}",
                if config == validating {
                    "validate"
                } else {
                    "mutate"
                },
                name.split('.').next().unwrap_or_default()
            )
        );
    }
}

#[test]
fn help_json_lists_serve_with_its_cluster_effects() {
    let help: Value = serde_json::from_str(&guard(&["help-json"])).expect("JSON");
    let serve = help["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .find(|c| c["name"] == "serve")
        .expect("serve is a command");
    assert!(
        serve["touches_cluster"]
            .as_str()
            .unwrap_or_default()
            .starts_with("watches and writes")
    );
    let flags: Vec<&str> = serve["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .filter_map(|a| a["long"].as_str())
        .collect();
    assert_eq!(
        flags,
        [
            "listen",
            "tls-cert",
            "tls-key",
            "tls-from-secret",
            "health-listen",
            "workers",
            "log-format"
        ]
    );
}

#[test]
fn serve_refuses_a_missing_certificate_with_its_code() {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::cargo_bin("guard")
        .expect("guard binary")
        .env_remove("KUBECONFIG")
        .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(home.path().join("missing.crt"))
        .arg("--tls-key")
        .arg(home.path().join("missing.key"))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0160"), "{stderr}");
    assert!(stderr.contains("missing.crt"), "{stderr}");
}

#[test]
fn serve_reads_the_mounted_secrets_files_by_default() {
    let out = Command::cargo_bin("guard")
        .expect("guard binary")
        .env_remove("KUBECONFIG")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0160"), "{stderr}");
    assert!(stderr.contains("/etc/piceli/tls/tls.crt"), "{stderr}");
}
