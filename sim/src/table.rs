//! `meta.k8s.io/v1` Table output for `kubectl get`: the usual columns of the common kinds, CRD printer
//! columns, and Name/Age for everything else.

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::time::{human_age, now_secs, parse_rfc3339};

fn age(obj: &Value) -> String {
    obj.pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
        .map(|t| human_age(now_secs() - t))
        .unwrap_or_else(|| "<unknown>".into())
}

fn s(obj: &Value, ptr: &str) -> String {
    match obj.pointer(ptr) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

fn n(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn count(obj: &Value, key: &str) -> usize {
    obj.get(key)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// Column name, type and cell function for a kind.
type Columns = Vec<(&'static str, &'static str)>;

fn columns(rt: &ResourceType) -> Columns {
    let c: &[(&str, &str)] = match rt.kind.as_str() {
        "ConfigMap" => &[("Name", "string"), ("Data", "integer"), ("Age", "string")],
        "Secret" => &[
            ("Name", "string"),
            ("Type", "string"),
            ("Data", "integer"),
            ("Age", "string"),
        ],
        "Namespace" => &[("Name", "string"), ("Status", "string"), ("Age", "string")],
        "Service" => &[
            ("Name", "string"),
            ("Type", "string"),
            ("Cluster-IP", "string"),
            ("External-IP", "string"),
            ("Port(s)", "string"),
            ("Age", "string"),
        ],
        "Deployment" => &[
            ("Name", "string"),
            ("Ready", "string"),
            ("Up-to-date", "integer"),
            ("Available", "integer"),
            ("Age", "string"),
        ],
        "StatefulSet" => &[("Name", "string"), ("Ready", "string"), ("Age", "string")],
        "ReplicaSet" => &[
            ("Name", "string"),
            ("Desired", "integer"),
            ("Current", "integer"),
            ("Ready", "integer"),
            ("Age", "string"),
        ],
        "Pod" => &[
            ("Name", "string"),
            ("Ready", "string"),
            ("Status", "string"),
            ("Restarts", "string"),
            ("Age", "string"),
        ],
        "ServiceAccount" => &[
            ("Name", "string"),
            ("Secrets", "integer"),
            ("Age", "string"),
        ],
        "Job" => &[
            ("Name", "string"),
            ("Status", "string"),
            ("Completions", "string"),
            ("Duration", "string"),
            ("Age", "string"),
        ],
        "CustomResourceDefinition" => &[("Name", "string"), ("Created At", "date")],
        _ => &[],
    };
    c.to_vec()
}

fn cells_for(rt: &ResourceType, obj: &Value) -> Vec<Value> {
    let name = json!(s(obj, "/metadata/name"));
    match rt.kind.as_str() {
        "ConfigMap" => vec![
            name,
            json!(count(obj, "data") + count(obj, "binaryData")),
            json!(age(obj)),
        ],
        "Secret" => vec![
            name,
            json!(s(obj, "/type")),
            json!(count(obj, "data")),
            json!(age(obj)),
        ],
        "Namespace" => vec![
            name,
            json!(or_none(s(obj, "/status/phase"))),
            json!(age(obj)),
        ],
        "Service" => {
            let ports: Vec<String> = obj
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            let node = p
                                .get("nodePort")
                                .map(|n| format!(":{n}"))
                                .unwrap_or_default();
                            format!("{}{node}/{}", s(p, "/port"), s(p, "/protocol"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let ext = obj
                .pointer("/spec/externalIPs")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(",")
                });
            vec![
                name,
                json!(s(obj, "/spec/type")),
                json!(or_none(s(obj, "/spec/clusterIP"))),
                json!(or_none(ext.unwrap_or_default())),
                json!(or_none(ports.join(","))),
                json!(age(obj)),
            ]
        }
        "Deployment" => vec![
            name,
            json!(format!(
                "{}/{}",
                n(obj, "/status/readyReplicas"),
                n(obj, "/spec/replicas")
            )),
            json!(n(obj, "/status/updatedReplicas")),
            json!(n(obj, "/status/availableReplicas")),
            json!(age(obj)),
        ],
        "StatefulSet" => vec![
            name,
            json!(format!(
                "{}/{}",
                n(obj, "/status/readyReplicas"),
                n(obj, "/spec/replicas")
            )),
            json!(age(obj)),
        ],
        "ReplicaSet" => vec![
            name,
            json!(n(obj, "/spec/replicas")),
            json!(n(obj, "/status/replicas")),
            json!(n(obj, "/status/readyReplicas")),
            json!(age(obj)),
        ],
        "Pod" => {
            let total = obj
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let statuses = obj
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let ready = statuses
                .iter()
                .filter(|c| c["ready"] == json!(true))
                .count();
            let restarts: i64 = statuses
                .iter()
                .map(|c| c["restartCount"].as_i64().unwrap_or(0))
                .sum();
            let mut phase = s(obj, "/status/phase");
            if phase.is_empty() {
                phase = "Pending".into();
            }
            // As kubectl's printer: a container's waiting or terminated reason wins over the phase.
            for c in statuses.iter().rev() {
                let reason = c
                    .pointer("/state/waiting/reason")
                    .or_else(|| c.pointer("/state/terminated/reason"))
                    .and_then(Value::as_str);
                if let Some(r) = reason.filter(|r| !r.is_empty()) {
                    phase = r.to_string();
                    break;
                }
            }
            if obj.pointer("/metadata/deletionTimestamp").is_some() {
                phase = "Terminating".into();
            }
            vec![
                name,
                json!(format!("{ready}/{total}")),
                json!(phase),
                json!(restarts.to_string()),
                json!(age(obj)),
            ]
        }
        "ServiceAccount" => vec![
            name,
            json!(
                obj.get("secrets")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
            ),
            json!(age(obj)),
        ],
        "Job" => {
            let done = n(obj, "/status/succeeded");
            let status = if done >= n(obj, "/spec/completions").max(1) {
                "Complete"
            } else {
                "Running"
            };
            vec![
                name,
                json!(status),
                json!(format!("{done}/{}", n(obj, "/spec/completions").max(1))),
                json!(""),
                json!(age(obj)),
            ]
        }
        "CustomResourceDefinition" => vec![name, json!(s(obj, "/metadata/creationTimestamp"))],
        _ => vec![name, json!(age(obj))],
    }
}

/// The extra columns `-o wide` shows (priority 1): containers, images and selector of workloads,
/// the selector of Services.
fn wide(rt: &ResourceType, obj: Option<&Value>) -> Vec<(&'static str, Value)> {
    let selector_text = |m: Option<&Value>| -> String {
        m.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    match rt.kind.as_str() {
        "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet" | "Job" => {
            let cs: Vec<Value> = obj
                .and_then(|o| o.pointer("/spec/template/spec/containers"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let names: Vec<&str> = cs.iter().filter_map(|c| c["name"].as_str()).collect();
            let images: Vec<&str> = cs.iter().filter_map(|c| c["image"].as_str()).collect();
            let sel = selector_text(obj.and_then(|o| o.pointer("/spec/selector/matchLabels")));
            vec![
                ("Containers", json!(names.join(","))),
                ("Images", json!(images.join(","))),
                ("Selector", json!(sel)),
            ]
        }
        "Service" => vec![(
            "Selector",
            json!(or_none(selector_text(
                obj.and_then(|o| o.pointer("/spec/selector"))
            ))),
        )],
        _ => Vec::new(),
    }
}

fn crd_cell(obj: &Value, json_path: &str) -> Value {
    let ptr = json_path.trim_start_matches('.').replace('.', "/");
    obj.pointer(&format!("/{ptr}"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The column definitions for a type.
pub fn column_definitions(rt: &ResourceType) -> Vec<Value> {
    let def = |name: &str, ty: &str, priority: i64| {
        let format = if name == "Name" { "name" } else { "" };
        json!({"name": name, "type": ty, "format": format, "description": "", "priority": priority})
    };
    if rt.crd && !rt.columns.is_empty() {
        let mut out = vec![def("Name", "string", 0)];
        out.extend(
            rt.columns
                .iter()
                .map(|c| def(&c.name, &c.type_, c.priority)),
        );
        if !rt.columns.iter().any(|c| c.name == "Age") {
            out.push(def("Age", "date", 0));
        }
        return out;
    }
    let cols = columns(rt);
    if cols.is_empty() {
        return vec![def("Name", "string", 0), def("Age", "string", 0)];
    }
    let mut defs: Vec<Value> = cols.iter().map(|(n, t)| def(n, t, 0)).collect();
    defs.extend(wide(rt, None).into_iter().map(|(n, _)| def(n, "string", 1)));
    defs
}

/// One row for an object (`include` = `None`, `Metadata` or `Object`).
pub fn row(rt: &ResourceType, obj: &Value, include: &str) -> Value {
    let cells = if rt.crd && !rt.columns.is_empty() {
        let mut c = vec![json!(s(obj, "/metadata/name"))];
        c.extend(rt.columns.iter().map(|col| crd_cell(obj, &col.json_path)));
        if !rt.columns.iter().any(|c| c.name == "Age") {
            c.push(json!(age(obj)));
        }
        c
    } else {
        let mut c = cells_for(rt, obj);
        if !columns(rt).is_empty() {
            c.extend(wide(rt, Some(obj)).into_iter().map(|(_, v)| v));
        }
        c
    };
    let mut r = json!({"cells": cells});
    match include {
        "None" => {}
        "Object" => r["object"] = obj.clone(),
        _ => {
            r["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))});
        }
    }
    r
}

/// A Table of objects.
pub fn table(
    rt: &ResourceType,
    objects: &[&Value],
    include: &str,
    list_meta: Value,
    with_columns: bool,
) -> Value {
    let rows: Vec<Value> = objects.iter().map(|o| row(rt, o, include)).collect();
    let mut t = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": [], "rows": rows});
    if with_columns {
        t["columnDefinitions"] = Value::Array(column_definitions(rt));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn deployment_rows() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let d = json!({"metadata": {"name": "web", "creationTimestamp": "2020-01-01T00:00:00Z"}, "spec": {"replicas": 3}, "status": {"readyReplicas": 1}});
        let t = table(&rt, &[&d], "Metadata", json!({}), true);
        assert_eq!(t["columnDefinitions"][1]["name"], "Ready");
        assert_eq!(t["rows"][0]["cells"][0], "web");
        assert_eq!(t["rows"][0]["cells"][1], "1/3");
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    }
}
