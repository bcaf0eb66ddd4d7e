//! Which fields change owner when the app takes an object over (`plan --adopt`): the fields the app's
//! forced dry run makes its own that another field manager (`kubectl-client-side-apply`, `kubectl-create`,
//! `helm`, `before-first-apply`, …) owns on the live object — taken from it (a value that changes) or
//! shared with it (the same value: server-side apply keeps both owners) — read from managedFields.

use super::conflicts::Taken;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The fields `manager` comes to own in `after` (the dry run's result) that other managers own in `live`,
/// in the managers' order, each field as the API server names it in a conflict (`.spec.replicas`,
/// `.spec.template.spec.containers[name="web"].image`).
pub fn taken(live: &Value, after: &Value, manager: &str) -> Vec<Taken> {
    let ours: BTreeSet<String> = entries(after)
        .filter(|e| e["manager"] == manager && e["operation"] == "Apply" && !is_subresource(e))
        .flat_map(|e| fields(&e["fieldsV1"]))
        .collect();
    let mut out = Vec::new();
    for entry in entries(live) {
        let who = entry["manager"].as_str().unwrap_or_default();
        if who == manager || is_subresource(entry) {
            continue;
        }
        out.extend(
            fields(&entry["fieldsV1"])
                .intersection(&ours)
                .map(|field| Taken {
                    field: field.clone(),
                    from: who.to_string(),
                }),
        );
    }
    out
}

/// The managedFields of `object` (just applied by `manager`) without the other managers' claims on the
/// fields `manager` owns: server-side apply keeps a field with an unchanged value shared with its old
/// owner, and a takeover makes the app its only owner, so that the app's next change of it is not a
/// conflict. Other managers keep every other field (Helm's annotations, kubectl's last-applied
/// configuration). `None` when no other manager shares a field.
pub fn released(object: &Value, manager: &str) -> Option<Vec<Value>> {
    let ours: BTreeSet<String> = entries(object)
        .filter(|e| e["manager"] == manager && e["operation"] == "Apply" && !is_subresource(e))
        .flat_map(|e| fields(&e["fieldsV1"]))
        .collect();
    let mut changed = false;
    let mut out = Vec::new();
    for entry in entries(object) {
        let mut entry = entry.clone();
        if entry["manager"] != manager
            && !is_subresource(&entry)
            && let Some(set) = entry.get_mut("fieldsV1").and_then(Value::as_object_mut)
        {
            let before = set.clone();
            strip(set, "", &ours);
            if *set != before {
                changed = true;
                if set.is_empty() {
                    continue;
                }
            }
        }
        out.push(entry);
    }
    changed.then_some(out)
}

/// Remove from a `fieldsV1` set the fields in `ours`, and the maps left empty.
fn strip(map: &mut Map<String, Value>, at: &str, ours: &BTreeSet<String>) {
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        if key == "." {
            if ours.contains(at) {
                map.remove(".");
            }
            continue;
        }
        let path = format!("{at}{}", step(&key));
        let Some(child) = map.get_mut(&key).and_then(Value::as_object_mut) else {
            continue;
        };
        if child.is_empty() {
            if ours.contains(&path) {
                map.remove(&key);
            }
            continue;
        }
        strip(child, &path, ours);
        if child.is_empty() {
            map.remove(&key);
        }
    }
}

fn is_subresource(entry: &Value) -> bool {
    entry
        .get("subresource")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

fn entries(object: &Value) -> impl Iterator<Item = &Value> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
}

/// The owned fields of a `fieldsV1` set: its leaves, and the list items and maps owned as a whole (`.`).
fn fields(set: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(map) = set.as_object() {
        walk(map, String::new(), &mut out);
    }
    out
}

fn walk(map: &Map<String, Value>, at: String, out: &mut BTreeSet<String>) {
    for (key, sub) in map {
        if key == "." {
            out.insert(at.clone());
            continue;
        }
        let path = format!("{at}{}", step(key));
        match sub.as_object() {
            Some(children) if !children.is_empty() => walk(children, path, out),
            _ => {
                out.insert(path);
            }
        }
    }
}

/// One step of a path: `f:name` → `.name`, `k:{"name":"web"}` → `[name="web"]`, `v:"x"` → `[="x"]`,
/// `i:0` → `[0]`.
fn step(key: &str) -> String {
    if let Some(field) = key.strip_prefix("f:") {
        return format!(".{field}");
    }
    if let Some(k) = key.strip_prefix("k:") {
        let keys = serde_json::from_str::<Map<String, Value>>(k)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_else(|_| k.to_string());
        return format!("[{keys}]");
    }
    if let Some(v) = key.strip_prefix("v:") {
        return format!("[={v}]");
    }
    if let Some(i) = key.strip_prefix("i:") {
        return format!("[{i}]");
    }
    format!(".{key}")
}

/// How often [`release_old_owners`] computes its patch again after a conflict.
const RELEASE_ATTEMPTS: u32 = 5;

/// After a takeover: the fields the app applied with the value they had stay shared with their old owner
/// (server-side apply); the app becomes their only owner, so its next change of them is no conflict. The
/// patch replaces `managedFields` as computed from one version of the object (its resourceVersion goes
/// with it); a controller may write in between — a Deployment whose pod template the takeover changed
/// gets a new revision annotation — so on a conflict it is computed again from the object as it is now.
pub async fn release_old_owners(
    api: &kube::Api<kube::api::DynamicObject>,
    name: &str,
    written: kube::api::DynamicObject,
) -> Result<kube::api::DynamicObject, kube::Error> {
    use kube::api::{Patch, PatchParams};
    let manager = super::plan::FIELD_MANAGER;
    let params = PatchParams {
        field_manager: Some(manager.to_string()),
        ..PatchParams::default()
    };
    let mut current = written;
    let mut attempt = 1;
    loop {
        let object = serde_json::to_value(&current).unwrap_or(Value::Null);
        let Some(fields) = released(&object, manager) else {
            return Ok(current);
        };
        let patch = serde_json::json!({"metadata": {
            "resourceVersion": object["metadata"]["resourceVersion"],
            "managedFields": fields,
        }});
        match api.patch(name, &params, &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < RELEASE_ATTEMPTS => {
                attempt += 1;
                current = api.get(name).await?;
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(entries: Value) -> Value {
        json!({"metadata": {"managedFields": entries}})
    }

    #[test]
    fn fields_the_app_comes_to_own_are_named_with_their_manager() {
        let live = object(json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "fieldsV1": {"f:status": {"f:replicas": {}}}}
        ]));
        // The replicas and the image are the app's now (the image shared: the same value).
        let after = object(json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                "f:spec": {"f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}},
            {"manager": "piceli", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}}
        ]));
        let got: Vec<(String, String)> = taken(&live, &after, "piceli")
            .into_iter()
            .map(|t| (t.field, t.from))
            .collect();
        let from = |f: &str| (f.to_string(), "kubectl-client-side-apply".to_string());
        assert_eq!(
            got,
            vec![
                from(".spec.replicas"),
                from(".spec.template.spec.containers[name=\"web\"].image"),
            ]
        );
    }

    #[test]
    fn a_takeover_releases_the_fields_shared_with_the_old_owner() {
        let applied = object(json!([
            {"manager": "helm", "operation": "Apply", "fieldsV1": {
                "f:metadata": {"f:annotations": {"f:meta.helm.sh/release-name": {}}},
                "f:spec": {"f:replicas": {}}}},
            {"manager": "kubectl-create", "operation": "Update", "fieldsV1": {"f:spec": {"f:paused": {}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "fieldsV1": {"f:status": {"f:replicas": {}}}},
            {"manager": "piceli", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}}}}
        ]));
        let released = released(&applied, "piceli").unwrap_or_default();
        let managers: Vec<&str> = released
            .iter()
            .filter_map(|e| e["manager"].as_str())
            .collect();
        // kubectl-create owned nothing else and is gone; helm keeps its annotation.
        assert_eq!(managers, ["helm", "kube-controller-manager", "piceli"]);
        assert_eq!(
            released[0]["fieldsV1"],
            json!({"f:metadata": {"f:annotations": {"f:meta.helm.sh/release-name": {}}}})
        );
        assert_eq!(released[2]["fieldsV1"]["f:spec"]["f:replicas"], json!({}));
        assert!(super::released(&object(json!([released[2].clone()])), "piceli").is_none());
    }

    #[test]
    fn nothing_is_taken_from_the_app_itself() {
        let live = object(json!([{"manager": "piceli", "operation": "Apply",
                                  "fieldsV1": {"f:data": {"f:a": {}}}}]));
        assert!(taken(&live, &object(json!([])), "piceli").is_empty());
    }
}
