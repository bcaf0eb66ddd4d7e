//! OpenAPI v2 (`/openapi/v2`): the Swagger 2.0 document of every served type, as kube-apiserver
//! aggregates it. kubectl reads it when its OpenAPI v3 path does not answer: validating a `kind:
//! List` client-side, and choosing the patch type of a client-side apply of a custom resource.
//! Built-in definitions come from the embedded schemas (with their descriptions), CRD versions
//! from their structural schemas (`crd`); `paths` from `paths`, the shared `parameters` from `params`. The document is
//! served as JSON or as gnostic's protobuf `Document` (`proto`, `encode`, `yaml`), built once per
//! change of the served types (`serve`).

mod crd;
mod encode;
mod params;
mod paths;
mod proto;
mod serve;
mod yaml;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

pub(crate) use serve::{V2Cache, respond};

use crate::apiserver::openapi::component_name;
use crate::registry::schema::{definitions, descriptions};
use crate::registry::{ResourceType, SchemaSource};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const V3_REF: &str = "#/components/schemas/";
const V2_REF: &str = "#/definitions/";

/// A built-in schema as v2 has it: `$ref`s to `#/definitions/`, without the `enum`s the embedded
/// schemas carry on `apiVersion` and `kind` (kube-apiserver's document has none there).
fn v2_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "enum")
                .map(|(k, c)| {
                    let c = match (k.as_str(), c) {
                        ("$ref", Value::String(r)) => Value::String(r.replacen(V3_REF, V2_REF, 1)),
                        ("properties", Value::Object(props)) => Value::Object(
                            props
                                .iter()
                                .map(|(name, p)| (name.clone(), v2_schema(p)))
                                .collect(),
                        ),
                        (x, c) if x.starts_with("x-") => c.clone(),
                        (_, c) => v2_schema(c),
                    };
                    (k.clone(), c)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(v2_schema).collect()),
        other => other.clone(),
    }
}

/// A built-in definition in v2 form with its descriptions (a property that is a `$ref` keeps
/// its description beside the `$ref`, as kube-apiserver's v2 document has it).
fn builtin(name: &str, def: &Value) -> Value {
    let mut out = if name == QUANTITY {
        // The v2 document types quantities as strings (the embedded schema has v3's oneOf).
        json!({"type": "string"})
    } else {
        v2_schema(def)
    };
    let Some(text) = descriptions().get(name) else {
        return out;
    };
    if let (Some(d), Some(m)) = (text.get(""), out.as_object_mut()) {
        m.insert("description".into(), d.clone());
    }
    let Some(props) = out.get_mut("properties").and_then(Value::as_object_mut) else {
        return out;
    };
    for (field, d) in text
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(p) = props.get_mut(field).and_then(Value::as_object_mut) {
            p.insert("description".into(), d.clone());
        }
    }
    out
}

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

/// Every definition: the served built-in kinds and their lists, what the paths return and take,
/// each CRD version's kind and list, and everything those refer to.
fn all_definitions(types: &[ResourceType]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut wanted: BTreeSet<String> = [
        "Status",
        "DeleteOptions",
        "Patch",
        "WatchEvent",
        "ObjectMeta",
        "ListMeta",
    ]
    .iter()
    .map(|n| format!("{META}.{n}"))
    .collect();
    let defs = definitions();
    for t in types {
        if t.scale.is_some() {
            wanted.insert("io.k8s.api.autoscaling.v1.Scale".into());
        }
        if t.group.is_empty() && t.plural == "serviceaccounts" {
            wanted.insert("io.k8s.api.authentication.v1.TokenRequest".into());
        }
        match &t.schema {
            SchemaSource::Builtin(n) => {
                wanted.insert(n.to_string());
                let list = format!("{n}List");
                if defs.contains_key(&list) {
                    wanted.insert(list);
                }
            }
            SchemaSource::Crd(_) => {
                let name = component_name(t);
                let def = crd::definition(t);
                refs(&def, &mut wanted);
                out.insert(format!("{name}List"), crd::list_definition(t, &name));
                out.insert(name, def);
            }
        }
    }
    let mut queue: Vec<String> = wanted.into_iter().collect();
    while let Some(name) = queue.pop() {
        if out.contains_key(&name) {
            continue;
        }
        let Some(def) = defs.get(&name) else {
            tracing::warn!(definition = %name, "OpenAPI v2: a referenced definition is not embedded");
            continue;
        };
        let def = builtin(&name, def);
        let mut more = BTreeSet::new();
        refs(&def, &mut more);
        queue.extend(more.into_iter().filter(|r| !out.contains_key(r)));
        out.insert(name, def);
    }
    out
}

/// The whole document for the served types.
pub fn document(types: &[ResourceType]) -> Value {
    let definitions: Map<String, Value> = all_definitions(types).into_iter().collect();
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "1.33"},
        "paths": paths::paths(types),
        "definitions": definitions,
        "parameters": params::parameters(),
        "securityDefinitions": {"BearerToken": {
            "description": "Bearer Token authentication", "type": "apiKey",
            "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::registry::crd::crd_types;

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
    fn every_reference_resolves_and_kinds_carry_their_gvk() {
        let doc = document(&served());
        let defs = doc["definitions"].as_object().expect("definitions");
        let mut all = BTreeSet::new();
        refs(&doc, &mut all);
        let missing: Vec<&String> = all.iter().filter(|r| !defs.contains_key(*r)).collect();
        assert!(missing.is_empty(), "dangling references: {missing:?}");
        let deploy = &defs["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deploy["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        assert_eq!(deploy["properties"]["kind"]["type"], "string");
        assert!(deploy["properties"]["kind"].get("enum").is_none());
        assert_eq!(
            deploy["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
        );
        assert!(deploy["properties"]["spec"]["description"].is_string());
        assert_eq!(defs[QUANTITY]["type"], "string");
        assert_eq!(
            defs["com.example.v1.Widget"]["x-kubernetes-group-version-kind"][0]["kind"],
            "Widget"
        );
        assert!(defs.contains_key("com.example.v1.WidgetList"));
        assert!(defs.contains_key("io.k8s.api.core.v1.Container"));
        assert!(defs.contains_key(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule"
        ));
        // Definitions of kinds the sim does not serve are left out.
        assert!(
            !defs.contains_key("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicy")
        );
    }
}
