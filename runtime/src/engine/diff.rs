//! Field-level differences between two objects, ignoring what the server sets on every write.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One changed field: its path, the value before and the value after (`None` when absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// `spec.template.spec.containers[web].image`.
    pub path: String,
    /// The live value.
    pub before: Option<Value>,
    /// The value the plan would write.
    pub after: Option<Value>,
}

/// Metadata fields the server changes on writes, never part of what an app declares.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "uid",
    "selfLink",
];

/// The annotation `kubectl apply` keeps its input in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The digest of `normalize(object)`, without making the copy.
pub fn normalized_digest(object: &Value) -> String {
    // `normalize` drops the annotations when nothing but kubectl's is left.
    let annotations_go = object["metadata"]["annotations"]
        .as_object()
        .is_some_and(|notes| notes.keys().all(|k| k == LAST_APPLIED));
    super::hash::digest_skipping(object, &|path, key| match path {
        [] => key == "status",
        ["metadata"] => SERVER_METADATA.contains(&key) || (key == "annotations" && annotations_go),
        ["metadata", "annotations"] => key == LAST_APPLIED,
        _ => false,
    })
}

/// An object as compared: without status and server-managed metadata.
pub fn normalize(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in SERVER_METADATA {
                meta.remove(*key);
            }
            if let Some(notes) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
                notes.remove(LAST_APPLIED);
                if notes.is_empty() {
                    meta.remove("annotations");
                }
            }
        }
    }
    out
}

/// Every difference between `before` and `after` (both normalized first).
pub fn diff(before: &Value, after: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", &normalize(before), &normalize(after), &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The key a list element is known by: its `name` (containers, ports, env), else its index.
fn element_key(v: &Value, index: usize) -> String {
    v.get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| index.to_string())
}

fn walk(path: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => maps(path, a, b, out),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            let keyed: Vec<String> = a
                .iter()
                .enumerate()
                .map(|(i, v)| element_key(v, i))
                .collect();
            let same_keys = b
                .iter()
                .enumerate()
                .all(|(i, v)| element_key(v, i) == keyed[i]);
            if !same_keys {
                out.push(Change {
                    path: path.to_string(),
                    before: Some(before.clone()),
                    after: Some(after.clone()),
                });
                return;
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                walk(&format!("{path}[{}]", keyed[i]), x, y, out);
            }
        }
        (x, y) if x == y => {}
        _ => out.push(Change {
            path: path.to_string(),
            before: Some(before.clone()),
            after: Some(after.clone()),
        }),
    }
}

fn maps(path: &str, a: &Map<String, Value>, b: &Map<String, Value>, out: &mut Vec<Change>) {
    for (k, av) in a {
        match b.get(k) {
            Some(bv) => walk(&join(path, k), av, bv, out),
            None => out.push(Change {
                path: join(path, k),
                before: Some(av.clone()),
                after: None,
            }),
        }
    }
    for (k, bv) in b {
        if !a.contains_key(k) {
            out.push(Change {
                path: join(path, k),
                before: None,
                after: Some(bv.clone()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_normalized_digest_is_the_digest_of_the_normalized_copy() {
        let last = "kubectl.kubernetes.io/last-applied-configuration";
        for annotations in [
            json!({last: "{}"}),
            json!({last: "{}", "team": "a"}),
            json!({}),
            json!({"team": "a"}),
        ] {
            let live = json!({
                "apiVersion": "v1", "kind": "ConfigMap", "status": {"x": 1},
                "metadata": {"name": "c", "uid": "u", "resourceVersion": "9", "generation": 2,
                    "creationTimestamp": "2026-12-01T00:00:00Z", "managedFields": [{"manager": "m"}],
                    "annotations": annotations, "labels": {"status": "kept"}},
                "data": {"status": "kept"}
            });
            assert_eq!(
                normalized_digest(&live),
                crate::engine::hash::digest(&normalize(&live)),
                "{live}"
            );
        }
        let bare = json!({"kind": "ConfigMap"});
        assert_eq!(
            normalized_digest(&bare),
            crate::engine::hash::digest(&normalize(&bare))
        );
    }

    #[test]
    fn server_noise_is_ignored() {
        let a = json!({"metadata": {"name": "x", "resourceVersion": "1", "managedFields": []}, "status": {"a": 1}});
        let b = json!({"metadata": {"name": "x", "resourceVersion": "9"}, "status": {"a": 2}});
        assert!(diff(&a, &b).is_empty());
    }

    #[test]
    fn image_change_has_a_named_path() {
        let a = json!({"spec": {"containers": [{"name": "web", "image": "a"}, {"name": "side", "image": "s"}]}});
        let b = json!({"spec": {"containers": [{"name": "web", "image": "b"}, {"name": "side", "image": "s"}]}});
        let d = diff(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "spec.containers[web].image");
        assert_eq!(
            (d[0].before.clone(), d[0].after.clone()),
            (Some(json!("a")), Some(json!("b")))
        );
    }

    #[test]
    fn added_and_removed_fields() {
        let d = diff(&json!({"a": 1, "b": 2}), &json!({"b": 2, "c": 3}));
        let paths: Vec<&str> = d.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["a", "c"]);
    }
}
