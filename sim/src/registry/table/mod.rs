//! `meta.k8s.io/v1` Table output for `kubectl get`: each built-in kind's columns (its strategy's
//! [`Printer`](crate::registry::strategy::Strategy::printer), built with the [`cells`] helpers), CRD
//! printer columns, and Name/Age for everything else.

pub(crate) mod cells;

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::time::{human_age, now_secs, parse_rfc3339};
use cells::{age, s};

/// A column: name, OpenAPI type and priority (1: only with `-o wide`).
#[derive(Clone, Copy)]
pub struct Col(pub &'static str, pub &'static str, pub i64);

/// The Age column.
pub(crate) const AGE: Col = Col("Age", "string", 0);
/// The containers of a workload's pod template (`-o wide`).
pub(crate) const CONTAINERS: Col = Col("Containers", "string", 1);
/// The images of a workload's pod template (`-o wide`).
pub(crate) const IMAGES: Col = Col("Images", "string", 1);
/// A workload's label selector (`-o wide`).
pub(crate) const SELECTOR: Col = Col("Selector", "string", 1);

/// How a kind prints: its columns, and the cells of one object in their order (without the
/// leading Name cell when the first column is Name).
#[derive(Clone, Copy)]
pub struct Printer {
    /// The columns, in order.
    pub columns: &'static [Col],
    /// The cells of one object, in the columns' order.
    pub cells: fn(&Value) -> Vec<Value>,
}

/// How one type prints, found once per table.
enum Columns<'a> {
    /// A built-in kind with columns of its own.
    Kind(Printer),
    /// A custom resource: (name, type, priority, JSONPath) of its CRD's printer columns.
    Crd(Vec<(&'a str, &'a str, i64, &'a str)>),
    /// Name and Age.
    Plain,
}

fn columns_of(rt: &ResourceType) -> Columns<'_> {
    if rt.crd {
        return Columns::Crd(crd_columns(rt));
    }
    match rt.strategy().printer() {
        Some(p) => Columns::Kind(p),
        None => Columns::Plain,
    }
}

/// The printer columns of a custom resource: its CRD's, or Age when it declares none (as
/// apiextensions-apiserver serves them).
fn crd_columns(rt: &ResourceType) -> Vec<(&str, &str, i64, &str)> {
    if rt.columns.is_empty() {
        return vec![("Age", "date", 0, ".metadata.creationTimestamp")];
    }
    rt.columns
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.type_.as_str(),
                c.priority,
                c.json_path.as_str(),
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

/// The description kube-apiserver's printers give a column: the API documentation of the field it
/// shows (`metadata.name` for Name, `metadata.creationTimestamp` for Age, else the kind's field of
/// that name, at the top or in its spec or status), empty when there is none.
fn column_description(rt: &ResourceType, column: &str) -> String {
    use crate::registry::schema::{definitions, descriptions};
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    let field_doc = |def: &str, field: &str| -> Option<String> {
        descriptions()
            .get(def)?
            .get("properties")?
            .get(field)?
            .as_str()
            .map(String::from)
    };
    match column {
        "Name" => return field_doc(META, "name").unwrap_or_default(),
        "Age" => return field_doc(META, "creationTimestamp").unwrap_or_default(),
        _ => {}
    }
    let crate::registry::SchemaSource::Builtin(def) = &rt.schema else {
        return String::new();
    };
    let mut chars = column.chars();
    let field: String = match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => return String::new(),
    };
    let nested = |part: &str| -> Option<String> {
        let r = definitions()
            .get(*def)?
            .pointer(&format!("/properties/{part}/$ref"))?;
        r.as_str()?.rsplit('/').next().map(String::from)
    };
    field_doc(def, &field)
        .or_else(|| nested("spec").and_then(|d| field_doc(&d, &field)))
        .or_else(|| nested("status").and_then(|d| field_doc(&d, &field)))
        .unwrap_or_default()
}

/// The column definitions for a type.
fn column_definitions(rt: &ResourceType, columns: &Columns<'_>) -> Vec<Value> {
    match columns {
        Columns::Crd(crd) => {
            let mut out = vec![def("Name", "string", 0)];
            out.extend(
                crd.iter()
                    .map(|(name, ty, priority, _)| def(name, ty, *priority)),
            );
            out
        }
        Columns::Kind(p) => p
            .columns
            .iter()
            .map(|c| {
                let mut d = def(c.0, c.1, c.2);
                d["description"] = json!(column_description(rt, c.0));
                d
            })
            .collect(),
        Columns::Plain => vec![def("Name", "string", 0), def("Age", "string", 0)],
    }
}

/// One row for an object (`include` = `None`, `Metadata` or `Object`).
fn row(columns: &Columns<'_>, obj: &Value, include: &str) -> Value {
    let name = json!(s(obj, "/metadata/name"));
    let cells = match columns {
        Columns::Crd(crd) => {
            let mut c = vec![name];
            c.extend(crd.iter().map(|(_, ty, _, path)| crd_cell(obj, ty, path)));
            c
        }
        Columns::Kind(p) => {
            let mut c = Vec::with_capacity(p.columns.len());
            if p.columns.first().is_some_and(|c| c.0 == "Name") {
                c.push(name);
            }
            c.extend((p.cells)(obj));
            c
        }
        Columns::Plain => vec![name, json!(age(obj))],
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
    let columns = columns_of(rt);
    let rows: Vec<Value> = objects.iter().map(|o| row(&columns, o, include)).collect();
    let mut t = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": [], "rows": rows});
    if with_columns {
        t["columnDefinitions"] = Value::Array(column_definitions(rt, &columns));
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
