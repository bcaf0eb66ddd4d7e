//! Cell helpers shared by the per-kind printers: field reads, ages, `<none>`, label selectors and
//! the containers/images of a pod template.

use serde_json::{Value, json};

use crate::time::{human_age, now_secs, parse_rfc3339};

/// kubectl's `translateTimestampSince`: the age of a timestamp, `<unknown>` when absent.
pub fn since(ts: Option<&Value>) -> String {
    ts.and_then(Value::as_str)
        .and_then(parse_rfc3339)
        .map(|t| human_age(now_secs() - t))
        .unwrap_or_else(|| "<unknown>".into())
}

/// The object's age (`metadata.creationTimestamp`).
pub fn age(obj: &Value) -> String {
    since(obj.pointer("/metadata/creationTimestamp"))
}

/// A field as text: strings as they are, other values as JSON, missing as empty.
pub fn s(obj: &Value, ptr: &str) -> String {
    match obj.pointer(ptr) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// The first of several fields that is set (e.g. core/v1 and events.k8s.io/v1 names of one field).
pub fn first(obj: &Value, ptrs: &[&str]) -> String {
    ptrs.iter()
        .map(|p| s(obj, p))
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

/// An integer field, 0 when missing.
pub fn n(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

/// The number of keys of a map field.
pub fn count(obj: &Value, key: &str) -> usize {
    obj.get(key)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}

/// `<none>` for an empty cell.
pub fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// A label map as `k=v,k=v`.
pub fn labels_text(m: Option<&Value>) -> String {
    m.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// A LabelSelector as kubectl formats it (`metav1.FormatLabelSelector`): `<none>` when empty.
pub fn selector_text(sel: Option<&Value>) -> String {
    let Some(sel) = sel else {
        return "<none>".into();
    };
    let mut parts = vec![labels_text(sel.get("matchLabels"))];
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let values: Vec<&str> = e["values"]
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let key = s(e, "/key");
        parts.push(match s(e, "/operator").as_str() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key,
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other}"),
        });
    }
    parts.retain(|p| !p.is_empty());
    or_none(parts.join(","))
}

/// The Containers and Images cells of a pod template at `template` (a JSON pointer).
pub fn containers_images(obj: &Value, template: &str) -> [Value; 2] {
    let cs: Vec<Value> = obj
        .pointer(&format!("{template}/spec/containers"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = cs.iter().filter_map(|c| c["name"].as_str()).collect();
    let images: Vec<&str> = cs.iter().filter_map(|c| c["image"].as_str()).collect();
    [json!(names.join(",")), json!(images.join(","))]
}

/// A workload's ready replicas of its desired ones (`1/3`).
pub fn ready_of(o: &Value) -> String {
    format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        n(o, "/spec/replicas")
    )
}
