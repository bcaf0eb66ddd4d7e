//! The pod template a workload controller makes a new pod from, with the sim-only behaviour
//! annotation inherited from the workload, and the pod-template hash the controllers name and label
//! their ReplicaSets, revisions and pods by.

use serde_json::{Value, json};

use crate::kubelet::pod::BEHAVIOR_ANNOTATION;

/// A workload's pod template, for a new pod. The sim-only `sim.piceli.dev/behavior` annotation may
/// be set on the workload itself (a ReplicaSet gets its Deployment's annotations): the template
/// inherits it unless it has its own, so apps whose DSL has no pod-template annotations can ask
/// for a failure too.
pub fn pod_template(owner: &Value) -> Value {
    let mut tmpl = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(json!({}));
    let key = BEHAVIOR_ANNOTATION;
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

/// The pod-template hash as the real controller spells it: FNV-32a of the template (and the
/// collision count), written as decimal digits mapped onto the "safe" alphabet.
pub fn template_hash(template: &Value, collision: i64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let text = serde_json::to_string(&as_stored(template)).unwrap_or_default();
    let mut h: u32 = 2_166_136_261;
    for b in text.bytes().chain(collision.to_string().bytes()) {
        h = (h ^ b as u32).wrapping_mul(16_777_619);
    }
    h.to_string()
        .bytes()
        .map(|d| ALPHABET[d as usize % ALPHABET.len()] as char)
        .collect()
}

/// A pod template as the real controller sees it once decoded: `metadata.creationTimestamp: null`
/// (which kubectl sends back on `rollout undo`) is the zero time, the same as no timestamp, and an
/// empty `metadata` the same as none.
pub(super) fn as_stored(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        if m.get("creationTimestamp") == Some(&Value::Null) {
            m.remove("creationTimestamp");
        }
        if m.is_empty()
            && let Some(o) = t.as_object_mut()
        {
            o.remove("metadata");
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_inherit_the_workloads_behavior_unless_the_template_has_its_own() {
        let key = BEHAVIOR_ANNOTATION;
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

    #[test]
    fn hashes_use_the_safe_alphabet() {
        let h = template_hash(
            &json!({"spec": {"containers": [{"name": "a", "image": "nginx"}]}}),
            0,
        );
        assert!(!h.is_empty() && h.len() <= 10);
        assert!(
            h.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
        assert_ne!(h, template_hash(&json!({"spec": {}}), 0));
        assert_ne!(
            h,
            template_hash(
                &json!({"spec": {"containers": [{"name": "a", "image": "nginx"}]}}),
                1
            )
        );
    }
}
