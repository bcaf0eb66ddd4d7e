//! Conversion between the stored version of a built-in kind and another version it is served at, as
//! kube-apiserver converts through its internal types: HorizontalPodAutoscaler is stored as
//! `autoscaling/v2` and also served as `autoscaling/v1` (the CPU utilization target and current value
//! map to v2's Resource metric; behavior and conditions, which v1 cannot hold, ride in the
//! `autoscaling.alpha.kubernetes.io/*` annotations as in `k8s.io/kubernetes/pkg/apis/autoscaling/v1`).

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;

const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Whether objects of `rt` are stored at another version than `rt`'s.
pub fn needed(rt: &ResourceType) -> bool {
    !rt.crd && rt.group == "autoscaling" && rt.version == "v1"
}

/// The stored form of an object written at `rt`'s version (unchanged when it already is).
pub fn to_storage(rt: &ResourceType, obj: Value) -> Value {
    if needed(rt) && obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        hpa_v1_to_v2(obj)
    } else {
        obj
    }
}

/// A stored object as `rt`'s version serves it (unchanged when it already is).
pub fn from_storage(rt: &ResourceType, obj: Value) -> Value {
    if needed(rt) && obj.get("apiVersion").and_then(Value::as_str) != Some("autoscaling/v1") {
        hpa_v2_to_v1(obj)
    } else {
        obj
    }
}

fn cpu_utilization(metrics: Option<&Value>, target: &str) -> Option<Value> {
    metrics?.as_array()?.iter().find_map(|m| {
        let r = m.get("resource")?;
        (m["type"] == "Resource" && r["name"] == "cpu")
            .then(|| r.pointer(&format!("/{target}/averageUtilization")).cloned())
            .flatten()
    })
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            to.insert((*k).to_string(), v.clone());
        }
    }
}

fn annotations(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"]
        .as_object_mut()
        .expect("annotations are an object")
}

fn hpa_v2_to_v1(mut obj: Value) -> Value {
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let status = obj.get("status").cloned();
    let mut v1_spec = Map::new();
    copy(
        &spec,
        &mut v1_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    if let Some(cpu) = cpu_utilization(spec.get("metrics"), "target") {
        v1_spec.insert("targetCPUUtilizationPercentage".into(), cpu);
    }
    if let Some(b) = spec.get("behavior") {
        annotations(&mut obj).insert(BEHAVIOR.into(), json!(b.to_string()));
    }
    obj["apiVersion"] = json!("autoscaling/v1");
    obj["spec"] = Value::Object(v1_spec);
    if let Some(status) = status {
        let mut v1_status = Map::new();
        copy(
            &status,
            &mut v1_status,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        if let Some(cpu) = cpu_utilization(status.get("currentMetrics"), "current") {
            v1_status.insert("currentCPUUtilizationPercentage".into(), cpu);
        }
        v1_status
            .entry("desiredReplicas")
            .or_insert_with(|| json!(0));
        if let Some(c) = status
            .get("conditions")
            .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
        {
            annotations(&mut obj).insert(CONDITIONS.into(), json!(c.to_string()));
        }
        obj["status"] = Value::Object(v1_status);
    }
    obj
}

fn hpa_v1_to_v2(mut obj: Value) -> Value {
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let status = obj.get("status").cloned();
    let notes = obj
        .pointer("/metadata/annotations")
        .cloned()
        .unwrap_or(json!({}));
    let parse = |k: &str| {
        notes
            .get(k)
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
    };
    let mut v2_spec = Map::new();
    copy(
        &spec,
        &mut v2_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    if let Some(cpu) = spec.get("targetCPUUtilizationPercentage") {
        v2_spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": cpu}}}]),
        );
    }
    if let Some(b) = parse(BEHAVIOR) {
        v2_spec.insert("behavior".into(), b);
    }
    let conditions = parse(CONDITIONS);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(Value::Object(m)) = meta.get_mut("annotations")
    {
        m.remove(BEHAVIOR);
        m.remove(CONDITIONS);
        if m.is_empty() {
            meta.remove("annotations");
        }
    }
    obj["apiVersion"] = json!("autoscaling/v2");
    obj["spec"] = Value::Object(v2_spec);
    if let Some(status) = status {
        let mut v2_status = Map::new();
        copy(
            &status,
            &mut v2_status,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        if let Some(cpu) = status.get("currentCPUUtilizationPercentage") {
            v2_status.insert(
                "currentMetrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": cpu}}}]),
            );
        }
        if let Some(c) = conditions {
            v2_status.insert("conditions".into(), c);
        }
        obj["status"] = Value::Object(v2_status);
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn hpas_round_trip_between_v1_and_the_stored_v2() {
        let v1 = Registry::default()
            .lookup("autoscaling", "v1", "horizontalpodautoscalers")
            .expect("autoscaling/v1 is served");
        let written = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                     "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}});
        let stored = to_storage(&v1, written.clone());
        assert_eq!(stored["apiVersion"], "autoscaling/v2");
        assert_eq!(
            stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            60
        );
        assert_eq!(from_storage(&v1, stored), written);
    }
}
