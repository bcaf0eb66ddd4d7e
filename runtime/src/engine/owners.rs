//! Which fields change owner when the app takes an object over (`plan --adopt`): the fields each other
//! field manager (`kubectl-client-side-apply`, `kubectl`, `helm`, `before-first-apply`, …) owns on the live
//! object and no longer owns after the app's forced dry run, read from the two objects' managedFields.

use super::conflicts::Taken;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The fields other managers lose to `manager` between `live` and `after` (the dry run's result), in the
/// managers' order, each field as the API server names it in a conflict (`.spec.replicas`,
/// `.spec.template.spec.containers[name="web"].image`).
pub fn taken(live: &Value, after: &Value, manager: &str) -> Vec<Taken> {
    let mut out = Vec::new();
    for entry in entries(live) {
        let who = entry["manager"].as_str().unwrap_or_default();
        if who == manager || entry.get("subresource").is_some_and(|s| s != "") {
            continue;
        }
        let before = fields(&entry["fieldsV1"]);
        let kept: BTreeSet<String> = entries(after)
            .filter(|e| e["manager"] == entry["manager"] && e["operation"] == entry["operation"])
            .flat_map(|e| fields(&e["fieldsV1"]))
            .collect();
        out.extend(before.difference(&kept).map(|field| Taken {
            field: field.clone(),
            from: who.to_string(),
        }));
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(entries: Value) -> Value {
        json!({"metadata": {"managedFields": entries}})
    }

    #[test]
    fn fields_another_manager_loses_are_taken_from_it() {
        let live = object(json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "fieldsV1": {"f:status": {"f:replicas": {}}}}
        ]));
        let after = object(json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}},
            {"manager": "piceli", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
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
                from(".spec.template.spec.containers[name=\"web\"]"),
                from(".spec.template.spec.containers[name=\"web\"].image"),
                from(".spec.template.spec.containers[name=\"web\"].name"),
            ]
        );
    }

    #[test]
    fn nothing_is_taken_from_the_app_itself() {
        let live = object(json!([{"manager": "piceli", "operation": "Apply",
                                  "fieldsV1": {"f:data": {"f:a": {}}}}]));
        assert!(taken(&live, &object(json!([])), "piceli").is_empty());
    }
}
