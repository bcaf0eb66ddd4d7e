//! AdmissionReview bodies for the unit tests of this module.

use serde_json::{Value, json};

pub(crate) const UID: &str = "0df28fbd-5f5f-11e8-bc74-36e6bb280816";

/// An AdmissionReview v1 for `apps/v1 deployments` (namespace `shop`, user `alice`, a dry run).
pub(crate) fn deployment_review(op: &str, object: Value) -> Vec<u8> {
    review(
        json!({"group": "apps", "version": "v1", "kind": "Deployment"}),
        json!({"group": "apps", "version": "v1", "resource": "deployments"}),
        op,
        object,
    )
}

/// An AdmissionReview v1 for `v1 pods` (namespace `shop`, user `alice`, a dry run).
pub(crate) fn pod_review(object: Value) -> Vec<u8> {
    review(
        json!({"group": "", "version": "v1", "kind": "Pod"}),
        json!({"group": "", "version": "v1", "resource": "pods"}),
        "CREATE",
        object,
    )
}

/// A Deployment with one container per image.
pub(crate) fn deployment(images: &[&str]) -> Value {
    let containers: Vec<Value> = images
        .iter()
        .enumerate()
        .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
        .collect();
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}}})
}

/// A Pod with one container and the label `app: web`.
pub(crate) fn pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})
}

fn review(kind: Value, resource: Value, op: &str, object: Value) -> Vec<u8> {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": UID, "kind": kind, "resource": resource,
            "name": "web", "namespace": "shop", "operation": op,
            "userInfo": {"username": "alice", "groups": ["dev"]},
            "object": object, "oldObject": null, "dryRun": true
        }
    })
    .to_string()
    .into_bytes()
}
