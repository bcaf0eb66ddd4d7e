//! Pure JSON helpers the controllers and the kubelet share: fields of objects, owner references,
//! pod templates. What reads or writes the cluster is on the handle ([`super::cluster::Cluster`]).

use serde_json::{Value, json};

/// `objects` (those `keep` accepts) by the uid of their controller owner: found once per turn, not
/// searched once per owner (which made a turn quadratic in the number of objects).
pub fn by_controller(
    objects: &[Value],
    keep: impl Fn(&Value) -> bool,
) -> std::collections::HashMap<&str, Vec<&Value>> {
    let mut out: std::collections::HashMap<&str, Vec<&Value>> = std::collections::HashMap::new();
    for o in objects.iter().filter(|o| keep(o)) {
        if let Some(owner) = controller_uid(o) {
            out.entry(owner).or_default().push(o);
        }
    }
    out
}

/// A string at a JSON pointer, or "".
pub fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// An integer at a JSON pointer, or `default`.
pub fn i(v: &Value, ptr: &str, default: i64) -> i64 {
    v.pointer(ptr).and_then(Value::as_i64).unwrap_or(default)
}

/// `metadata.uid`.
pub fn uid(v: &Value) -> &str {
    s(v, "/metadata/uid")
}

/// Whether the object is being deleted.
pub fn terminating(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some()
}

/// The uid of the object's controller owner reference, if any.
pub fn controller_uid(v: &Value) -> Option<&str> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// An owner reference to `owner` marking it as the controller.
pub fn owner_ref(owner: &Value) -> Value {
    serde_json::json!({
        "apiVersion": s(owner, "/apiVersion"),
        "kind": s(owner, "/kind"),
        "name": s(owner, "/metadata/name"),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// A workload's pod template, for a new pod. The sim-only `sim.piceli.dev/behavior` annotation may
/// be set on the workload itself (a ReplicaSet gets its Deployment's annotations): the template
/// inherits it unless it has its own, so apps whose DSL has no pod-template annotations can ask
/// for a failure too.
pub fn pod_template(owner: &Value) -> Value {
    let mut tmpl = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(json!({}));
    let key = super::BEHAVIOR_ANNOTATION;
    let inherited = owner
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .cloned();
    let own = tmpl
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key));
    if let (Some(b), None) = (inherited, own) {
        if !tmpl["metadata"].is_object() {
            tmpl["metadata"] = json!({});
        }
        if !tmpl["metadata"]["annotations"].is_object() {
            tmpl["metadata"]["annotations"] = json!({});
        }
        tmpl["metadata"]["annotations"][key] = b;
    }
    tmpl
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn pods_inherit_the_workloads_behavior_unless_the_template_has_its_own() {
        let key = super::super::BEHAVIOR_ANNOTATION;
        let owner = json!({
            "metadata": {"annotations": {key: "crash-loop"}},
            "spec": {"template": {"spec": {"containers": []}}}
        });
        assert_eq!(
            pod_template(&owner)["metadata"]["annotations"][key],
            "crash-loop"
        );
        let own = json!({
            "metadata": {"annotations": {key: "crash-loop"}},
            "spec": {"template": {"metadata": {"annotations": {key: "never-ready"}}}}
        });
        assert_eq!(
            pod_template(&own)["metadata"]["annotations"][key],
            "never-ready"
        );
        let plain = json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}});
        assert_eq!(pod_template(&plain), plain["spec"]["template"]);
    }
}
