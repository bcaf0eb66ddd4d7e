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
            }
        })
        .collect()
}

/// Sets `status` of a CRD: names accepted and Established, stored versions.
pub fn set_status(crd: &mut Value) {
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let now = crate::time::now_rfc3339();
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
    let existing = crd.get("status").and_then(|s| s.get("conditions")).cloned();
    let conditions = existing.unwrap_or_else(|| {
        json!([
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
        ])
    });
    crd["status"] =
        json!({"acceptedNames": names, "conditions": conditions, "storedVersions": stored});
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
