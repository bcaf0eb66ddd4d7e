//! `meta.k8s.io/v1` Table output for `kubectl get`: the usual columns of the common kinds, CRD printer
//! columns, and Name/Age for everything else.

mod cells;
mod core;
mod rbac;
mod workloads;

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::time::{human_age, now_secs, parse_rfc3339};
use cells::{age, s};

/// A column: name, OpenAPI type and priority (1: only with `-o wide`).
#[derive(Clone, Copy)]
pub struct Col(pub &'static str, pub &'static str, pub i64);

/// How a kind prints: its columns, and the cells of one object in their order (without the
/// leading Name cell when the first column is Name).
pub struct Printer {
    /// The columns, in order.
    pub columns: &'static [Col],
    /// The cells of one object, in the columns' order.
    pub cells: fn(&Value) -> Vec<Value>,
}

fn printer(rt: &ResourceType) -> Option<Printer> {
    if rt.crd {
        return None;
    }
    match rt.kind.as_str() {
        "CustomResourceDefinition" => Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Created At", "date", 0)],
            cells: |o| vec![json!(s(o, "/metadata/creationTimestamp"))],
        }),
        kind => core::printer(kind)
            .or_else(|| workloads::printer(kind))
            .or_else(|| rbac::printer(kind)),
    }
}

/// The printer columns of a custom resource: its CRD's, or Age when it declares none (as
/// apiextensions-apiserver serves them).
fn crd_columns(rt: &ResourceType) -> Vec<(String, String, i64, String)> {
    if rt.columns.is_empty() {
        return vec![(
            "Age".into(),
            "date".into(),
            0,
            ".metadata.creationTimestamp".into(),
        )];
    }
    rt.columns
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.type_.clone(),
                c.priority,
                c.json_path.clone(),
            )
        })
        .collect()
}

/// A custom resource's cell, typed as its column (apiextensions' `cellForJSONValue`): `date`
/// columns are ages, a value of the wrong type is empty.
fn crd_cell(obj: &Value, ty: &str, json_path: &str) -> Value {
    let Some(v) = at_json_path(obj, json_path).filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match (ty, v) {
        ("string", Value::String(_)) => v.clone(),
        ("string", other) => json!(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(_)) | ("boolean", Value::Bool(_)) => v.clone(),
        ("date", Value::String(t)) => match parse_rfc3339(t) {
            Some(t) => json!(human_age(now_secs() - t)),
            None => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

/// The value a printer column's JSONPath selects (the first, as kubectl prints it): plain dotted
/// paths directly, filters and indices (`.status.conditions[?(@.type=="Ready")].status`) through a
/// JSONPath evaluator.
fn at_json_path<'v>(obj: &'v Value, json_path: &str) -> Option<&'v Value> {
    if !json_path.contains(['[', '*']) {
        let ptr = json_path.trim_start_matches('.').replace('.', "/");
        return obj.pointer(&format!("/{ptr}"));
    }
    use jsonpath_rust::JsonPath;
    let path = format!("${}", json_path.trim_start_matches('$'));
    obj.query(&path).ok()?.into_iter().next()
}

fn def(name: &str, ty: &str, priority: i64) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": ty, "format": format, "description": "", "priority": priority})
}

/// The column definitions for a type.
pub fn column_definitions(rt: &ResourceType) -> Vec<Value> {
    if rt.crd {
        let mut out = vec![def("Name", "string", 0)];
        out.extend(
            crd_columns(rt)
                .iter()
                .map(|(name, ty, priority, _)| def(name, ty, *priority)),
        );
        return out;
    }
    match printer(rt) {
        Some(p) => p.columns.iter().map(|c| def(c.0, c.1, c.2)).collect(),
        None => vec![def("Name", "string", 0), def("Age", "string", 0)],
    }
}

/// One row for an object (`include` = `None`, `Metadata` or `Object`).
pub fn row(rt: &ResourceType, obj: &Value, include: &str) -> Value {
    let name = json!(s(obj, "/metadata/name"));
    let cells = if rt.crd {
        let mut c = vec![name];
        c.extend(
            crd_columns(rt)
                .iter()
                .map(|(_, ty, _, path)| crd_cell(obj, ty, path)),
        );
        c
    } else {
        match printer(rt) {
            Some(p) => {
                let mut c = Vec::with_capacity(p.columns.len());
                if p.columns.first().is_some_and(|c| c.0 == "Name") {
                    c.push(name);
                }
                c.extend((p.cells)(obj));
                c
            }
            None => vec![name, json!(age(obj))],
        }
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
