//! CustomResourceDefinitions: the resource types a CRD object serves, and the status (accepted
//! names, Established) the simulator gives every CRD it stores.

use serde_json::{Value, json};

use crate::registry::{PrinterColumn, ResourceType, ScalePaths, SchemaSource};

fn s(v: &Value, ptr: &str) -> String {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The types a CRD object serves (one per served version).
pub fn crd_types(crd: &Value) -> Vec<ResourceType> {
    let group = s(crd, "/spec/group");
    let kind = s(crd, "/spec/names/kind");
    let plural = s(crd, "/spec/names/plural");
    if group.is_empty() || kind.is_empty() || plural.is_empty() {
        return Vec::new();
    }
    let singular = match s(crd, "/spec/names/singular") {
        x if x.is_empty() => kind.to_lowercase(),
        x => x,
    };
    let strings = |ptr: &str| -> Vec<String> {
        crd.pointer(ptr)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .map(|v| {
            let scale = v.pointer("/subresources/scale").map(|sc| ScalePaths {
                spec_replicas: s(sc, "/specReplicasPath"),
                status_replicas: s(sc, "/statusReplicasPath"),
                label_selector: sc
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(String::from),
            });
            let columns = v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .map(|cols| {
                    cols.iter()
                        .map(|c| PrinterColumn {
                            name: s(c, "/name"),
                            type_: s(c, "/type"),
                            json_path: s(c, "/jsonPath"),
                            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_default();
            ResourceType {
                group: group.clone(),
                version: s(v, "/name"),
                plural: plural.clone(),
                singular: singular.clone(),
                kind: kind.clone(),
                namespaced: s(crd, "/spec/scope") != "Cluster",
                short_names: strings("/spec/names/shortNames"),
                categories: strings("/spec/names/categories"),
                status_subresource: v.pointer("/subresources/status").is_some(),
                scale,
                schema: SchemaSource::Crd(
                    v.pointer("/schema/openAPIV3Schema")
                        .cloned()
                        .unwrap_or(Value::Null),
                ),
                columns,
                crd: true,
                create_only: false,
                selectable_fields: v
                    .get("selectableFields")
                    .and_then(Value::as_array)
                    .map(|fields| {
                        fields
                            .iter()
                            .map(|f| s(f, "/jsonPath").trim_start_matches('.').to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Sets `status` of a CRD: names accepted and Established, stored versions.
/// The status a CRD is created with, before apiextensions' naming controller accepted its names:
/// no accepted names, no conditions, the storage version stored.
pub fn initial_status(crd: &mut Value) {
    let stored: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"] == json!(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    crd["status"] = json!({"acceptedNames": {"kind": "", "plural": ""}, "conditions": null,
        "storedVersions": stored});
}

/// Whether a CRD's names were accepted (it has conditions; the naming controller set them).
pub fn names_accepted(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty())
}

pub fn set_status(crd: &mut Value) {
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let now = crate::time::now_rfc3339();
    // `storedVersions` only grows: every version that was ever the storage version stays listed until a
    // storage migration removes it through the status subresource (apiextensions' status strategy).
    let mut stored: Vec<Value> = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for v in crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == json!(true))
    {
        if !stored.contains(&v["name"]) {
            stored.push(v["name"].clone());
        }
    }
    let existing = crd
        .get("status")
        .and_then(|s| s.get("conditions"))
        .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
        .cloned();
    let conditions = existing.unwrap_or_else(|| {
        json!([
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
        ])
    });
    crd["status"] =
        json!({"acceptedNames": names, "conditions": conditions, "storedVersions": stored});
}

/// Fills in the `default`s a structural CRD schema declares, for fields that are absent, walking
/// into objects and array items that are present (as the real server does on every write).
pub fn apply_defaults(obj: &mut Value, schema: &Value) {
    match obj {
        Value::Object(m) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                if let Some(ap) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                    for v in m.values_mut() {
                        apply_defaults(v, ap);
                    }
                }
                return;
            };
            for (name, prop) in props {
                if !m.contains_key(name)
                    && let Some(d) = prop.get("default")
                {
                    m.insert(name.clone(), d.clone());
                }
                if let Some(child) = m.get_mut(name) {
                    apply_defaults(child, prop);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// `required`, `enum`, `minimum`/`maximum` and `pattern`-free checks of a CRD schema, as 422 causes.
pub fn validate(obj: &Value, schema: &Value, path: &str, out: &mut Vec<crate::status::Cause>) {
    use crate::status::Cause;
    if let Some(cause) = crate::registry::crd_types::type_mismatch(obj, schema, path) {
        out.push(cause);
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !obj.is_null()
        && !allowed.contains(obj)
    {
        let list: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
        out.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {obj}: supported values: {}",
                list.join(", ")
            ),
            field: path.to_string(),
        });
    }
    if let Some(n) = obj.as_f64() {
        if let Some(min) = schema
            .get("minimum")
            .and_then(Value::as_f64)
            .filter(|m| n < *m)
        {
            out.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {obj}: {path} in body should be greater than or equal to {min}"
                ),
                field: path.to_string(),
            });
        }
        if let Some(max) = schema
            .get("maximum")
            .and_then(Value::as_f64)
            .filter(|m| n > *m)
        {
            out.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {obj}: {path} in body should be less than or equal to {max}"
                ),
                field: path.to_string(),
            });
        }
    }
    match obj {
        Value::Object(m) => {
            for req in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !m.contains_key(req) {
                    let field = if path.is_empty() {
                        req.to_string()
                    } else {
                        format!("{path}.{req}")
                    };
                    out.push(Cause {
                        reason: "FieldValueRequired".into(),
                        message: "Required value".into(),
                        field,
                    });
                }
            }
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in m {
                    if let Some(p) = props.get(k) {
                        let field = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        validate(v, p, &field, out);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_defaults_and_validation() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["size"],
            "properties": {"size": {"type": "string", "enum": ["S", "M"]}, "replicas": {"type": "integer", "default": 1, "minimum": 0},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}}}}}}});
        let mut obj = json!({"spec": {"size": "XL", "ports": [{}]}});
        apply_defaults(&mut obj, &schema);
        assert_eq!(
            obj,
            json!({"spec": {"size": "XL", "ports": [{"protocol": "TCP"}], "replicas": 1}})
        );
        let mut causes = Vec::new();
        validate(&obj, &schema, "", &mut causes);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "spec.size");
        let mut missing = Vec::new();
        validate(&json!({"spec": {}}), &schema, "", &mut missing);
        assert_eq!(missing[0].field, "spec.size");
        assert_eq!(missing[0].message, "Required value");
    }

    #[test]
    fn crds_become_types() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]}});
        let types = crd_types(&crd);
        assert_eq!(types.len(), 1);
        assert_eq!(types[0].singular, "widget");
        assert!(types[0].status_subresource);
        assert_eq!(
            types[0].scale.as_ref().map(|s| s.spec_replicas.as_str()),
            Some(".spec.replicas")
        );
    }
}
