//! The cert-manager.io/v1 CustomResourceDefinitions the built-in cert-manager installs: Issuer,
//! ClusterIssuer and Certificate, with a status subresource and cert-manager's printer columns
//! (schemas left open, as the sim does not run cert-manager's validating webhook).

use serde_json::{Value, json};

fn crd(plural: &str, kind: &str, scope: &str, short: &[&str], columns: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{plural}.cert-manager.io"),
            "labels": {"app.kubernetes.io/name": "cert-manager", "app.kubernetes.io/instance": "piceli-sim"},
        },
        "spec": {
            "group": "cert-manager.io",
            "names": {
                "plural": plural,
                "singular": kind.to_lowercase(),
                "kind": kind,
                "listKind": format!("{kind}List"),
                "shortNames": short,
                "categories": ["cert-manager"],
            },
            "scope": scope,
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    },
                }},
            }],
        },
    })
}

/// The CRDs, in the order they are created.
pub fn all() -> Vec<Value> {
    let ready = json!({"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"});
    let status = json!({"name": "Status", "type": "string", "priority": 1, "jsonPath": ".status.conditions[?(@.type==\"Ready\")].message"});
    let age = json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"});
    vec![
        crd(
            "issuers",
            "Issuer",
            "Namespaced",
            &[],
            json!([ready, status, age]),
        ),
        crd(
            "clusterissuers",
            "ClusterIssuer",
            "Cluster",
            &[],
            json!([ready, status, age]),
        ),
        crd(
            "certificates",
            "Certificate",
            "Namespaced",
            &["cert", "certs"],
            json!([
                ready,
                {"name": "Secret", "type": "string", "jsonPath": ".spec.secretName"},
                {"name": "Issuer", "type": "string", "priority": 1, "jsonPath": ".spec.issuerRef.name"},
                status,
                age,
            ]),
        ),
    ]
}
