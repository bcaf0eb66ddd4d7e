//! OpenAPI v2 (`/openapi/v2`): the Swagger 2.0 document of every served type, as kube-apiserver
//! aggregates it. kubectl reads it when its OpenAPI v3 path does not answer: validating a `kind:
//! List` client-side, and choosing the patch type of a client-side apply of a custom resource.
//! The built-in part is kube-apiserver's own document (`openapi_captured`); each CRD version adds
//! its kind and list (`crd`) and its paths (`paths`, with the shared `parameters` of `params`). The
//! document is served as JSON or as gnostic's protobuf `Document` (`proto`, `encode`, `yaml`), built
//! once per change of the served types (`serve`).
mod crd;
mod encode;
mod params;
mod paths;
mod proto;
mod serve;
mod yaml;

use bytes::Bytes;
use serde_json::{Map, Value};

pub(crate) use serve::{V2Cache, respond};

use crate::apiserver::openapi::component_name;
use crate::apiserver::openapi_captured::captured;
use crate::registry::{ResourceType, SchemaSource};

/// The served custom resource types (the built-in ones are in kube-apiserver's document).
fn custom(types: &[ResourceType]) -> Vec<ResourceType> {
    types
        .iter()
        .filter(|t| matches!(t.schema, SchemaSource::Crd(_)))
        .cloned()
        .collect()
}

/// The whole document for the served types, and its JSON text.
pub fn document(types: &[ResourceType]) -> (Value, Bytes) {
    let base = &captured().v2;
    let mut doc: Value = serde_json::from_slice(base).unwrap_or_else(|_| Value::Object(Map::new()));
    let custom = custom(types);
    if custom.is_empty() {
        // kube-apiserver's own bytes.
        return (doc, base.clone());
    }
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths.extend(paths::paths(&custom));
        paths.sort_keys();
    }
    if let Some(defs) = doc.get_mut("definitions").and_then(Value::as_object_mut) {
        for t in &custom {
            let name = component_name(t);
            defs.insert(format!("{name}List"), crd::list_definition(t, &name));
            defs.insert(name, crd::definition(t));
        }
        defs.sort_keys();
    }
    let text = serde_json::to_vec(&doc).unwrap_or_default();
    (doc, Bytes::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::registry::crd::crd_types;
    use std::collections::BTreeSet;

    const V2_REF: &str = "#/definitions/";

    /// The definition names a schema refers to.
    fn refs(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    match (k.as_str(), c) {
                        ("$ref", Value::String(r)) => {
                            if let Some(name) = r.strip_prefix(V2_REF) {
                                out.insert(name.to_string());
                            }
                        }
                        // Property names are not extensions (`x-kubernetes-validations` is a
                        // property of JSONSchemaProps).
                        ("properties", Value::Object(props)) => {
                            props.values().for_each(|p| refs(p, out))
                        }
                        (x, _) if x.starts_with("x-") => {}
                        _ => refs(c, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
            _ => {}
        }
    }
    use serde_json::json;

    fn served() -> Vec<ResourceType> {
        let mut types = Registry::default().all();
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}});
        types.extend(crd_types(&crd));
        types
    }

    #[test]
    fn the_built_in_part_is_kube_apiservers_and_crds_add_their_kinds_and_paths() {
        let (_, plain) = document(&Registry::default().all());
        assert_eq!(plain, captured().v2, "no CRD: kube-apiserver's own bytes");
        let (doc, text) = document(&served());
        assert_eq!(
            serde_json::from_slice::<Value>(&text).ok(),
            Some(doc.clone())
        );
        let defs = doc["definitions"].as_object().expect("definitions");
        let mut all = BTreeSet::new();
        refs(&doc, &mut all);
        let missing: Vec<&String> = all.iter().filter(|r| !defs.contains_key(*r)).collect();
        assert!(missing.is_empty(), "dangling references: {missing:?}");
        // The CRD's operations refer to kube-apiserver's shared parameters.
        let text = String::from_utf8_lossy(&text);
        let params = doc["parameters"].as_object().expect("parameters");
        for r in text.split("\"#/parameters/").skip(1) {
            let name = r.split('"').next().unwrap_or_default();
            assert!(params.contains_key(name), "no shared parameter {name}");
        }
        let deploy = &defs["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deploy["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        assert_eq!(
            defs["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["type"]["enum"],
            json!(["Recreate", "RollingUpdate"])
        );
        assert_eq!(
            defs["com.example.v1.Widget"]["x-kubernetes-group-version-kind"][0]["kind"],
            "Widget"
        );
        assert!(defs.contains_key("com.example.v1.WidgetList"));
        assert!(
            doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
                .is_object()
        );
    }
}
