//! A CRD version's definitions in the OpenAPI v2 document, as apiextensions-apiserver publishes
//! them: the structural schema made v2-compatible (no `anyOf`/`allOf`/`oneOf`/`not`, nullable and
//! preserve-unknown-fields nodes untyped, no defaults), with `apiVersion`, `kind` and `metadata`
//! set on the root and on embedded resources, and the `List` kind beside it.

use serde_json::{Map, Value, json};

use crate::registry::{ResourceType, SchemaSource};

const OBJECT_META: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The keys of a structural schema node that survive into OpenAPI v2 (`default` is pruned,
/// `nullable` and the junctors are dropped, `example` and `externalDocs` are not structural).
const KEEP: &[&str] = &[
    "type",
    "description",
    "title",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "properties",
    "items",
    "additionalProperties",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

fn is_true(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).and_then(Value::as_bool) == Some(true)
}

/// One schema node made v2-compatible (ToStructuralOpenAPIV2 with defaults pruned): the parent
/// is rewritten before its children, so a nullable property still counts as nullable when its
/// parent's `required` is filtered.
fn v2_node(v: &Value) -> Value {
    let Some(src) = v.as_object() else {
        return json!({});
    };
    let mut m: Map<String, Value> = src
        .iter()
        .filter(|(k, _)| KEEP.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let preserve = is_true(&m, "x-kubernetes-preserve-unknown-fields");
    if is_true(src, "nullable") || preserve {
        // kubectl cannot cope with untyped values that have items or properties.
        m.remove("items");
        m.remove("properties");
    }
    if is_true(src, "nullable") {
        m.remove("type");
    }
    let array_without_items =
        m.get("type").and_then(Value::as_str) == Some("array") && !m.contains_key("items");
    let open_object = preserve && m.get("type").and_then(Value::as_str) == Some("object");
    if array_without_items || open_object {
        m.remove("type");
    }
    let nullable_properties: Vec<String> = m
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, p)| p.get("nullable").and_then(Value::as_bool) == Some(true))
        .map(|(name, _)| name.clone())
        .collect();
    let nullable_values = m
        .get("additionalProperties")
        .and_then(|a| a.get("nullable"))
        .and_then(Value::as_bool)
        == Some(true);
    if let Some(Value::Array(required)) = m.get_mut("required") {
        required.retain(|r| {
            r.as_str()
                .is_none_or(|r| !nullable_properties.iter().any(|n| n == r))
        });
        if required.is_empty() || nullable_values {
            m.remove("required");
        }
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for p in props.values_mut() {
            *p = v2_node(p);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key)
            && child.is_object()
        {
            *child = v2_node(child);
        }
    }
    Value::Object(m)
}

/// Sets `apiVersion`, `kind` and `metadata` on every embedded resource that does not preserve
/// unknown fields, and requires `kind` and `apiVersion` there.
fn embedded(v: &mut Value) {
    let Some(m) = v.as_object_mut() else { return };
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.values_mut().for_each(embedded);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key) {
            embedded(child);
        }
    }
    if is_true(m, "x-kubernetes-preserve-unknown-fields")
        || !is_true(m, "x-kubernetes-embedded-resource")
    {
        return;
    }
    let props = m
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(props) = props {
        props.insert(
            "apiVersion".into(),
            json!({"description": EMBEDDED_API_VERSION_DOC, "type": "string"}),
        );
        props.insert(
            "kind".into(),
            json!({"description": EMBEDDED_KIND_DOC, "type": "string"}),
        );
        props.insert(
            "metadata".into(),
            json!({"description": METADATA_DOC, "$ref": OBJECT_META}),
        );
    }
    let required = m.entry("required").or_insert_with(|| json!([]));
    if let Some(list) = required.as_array_mut() {
        for name in ["kind", "apiVersion"] {
            if !list.iter().any(|r| r == name) {
                list.push(json!(name));
            }
        }
    }
}

fn gvk(t: &ResourceType, kind: &str) -> Value {
    json!([{"group": t.group, "kind": kind, "version": t.version}])
}

/// The definition of a CRD version's kind.
pub fn definition(t: &ResourceType) -> Value {
    let schema = match &t.schema {
        SchemaSource::Crd(s) if s.is_object() => Some(s),
        _ => None,
    };
    let open = schema.is_none_or(|s| {
        s.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true)
    });
    let mut out = match schema {
        // Only `type: object`: properties would make kubectl refuse every field not listed.
        _ if open => json!({"type": "object"}),
        Some(s) => {
            let mut root = v2_node(s);
            embedded(&mut root);
            if let Some(m) = root.as_object_mut() {
                let props = m.entry("properties").or_insert_with(|| json!({}));
                if let Some(props) = props.as_object_mut() {
                    props.insert(
                        "apiVersion".into(),
                        json!({"description": API_VERSION_DOC, "type": "string"}),
                    );
                    props.insert(
                        "kind".into(),
                        json!({"description": KIND_DOC, "type": "string"}),
                    );
                    props.insert(
                        "metadata".into(),
                        json!({"description": METADATA_DOC, "$ref": OBJECT_META}),
                    );
                }
            }
            root
        }
        None => json!({"type": "object"}),
    };
    if let Some(m) = out.as_object_mut() {
        m.insert("x-kubernetes-group-version-kind".into(), gvk(t, &t.kind));
        if !t.selectable_fields.is_empty() {
            let fields: Vec<Value> = t
                .selectable_fields
                .iter()
                .map(|f| json!({"fieldPath": f}))
                .collect();
            m.insert(
                "x-kubernetes-selectable-fields".into(),
                Value::Array(fields),
            );
        }
    }
    out
}

/// The definition of a CRD version's list kind (`WidgetList`), whose items are `name`.
pub fn list_definition(t: &ResourceType, name: &str) -> Value {
    let mut out = json!({
        "description": format!("{}List is a list of {}", t.kind, t.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DOC, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", t.plural),
                "type": "array",
                "items": {"$ref": format!("#/definitions/{name}")},
            },
            "kind": {"description": KIND_DOC, "type": "string"},
            "metadata": {"description": LIST_METADATA_DOC, "$ref": LIST_META},
        },
        "x-kubernetes-group-version-kind": gvk(t, &format!("{}List", t.kind)),
    });
    if !t.selectable_fields.is_empty()
        && let Some(m) = out.as_object_mut()
    {
        let fields: Vec<Value> = t
            .selectable_fields
            .iter()
            .map(|f| json!({"fieldPath": f}))
            .collect();
        m.insert(
            "x-kubernetes-selectable-fields".into(),
            Value::Array(fields),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::crd::crd_types;

    fn widget(schema: Value) -> ResourceType {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "schema": {"openAPIV3Schema": schema}}]}});
        crd_types(&crd).remove(0)
    }

    #[test]
    fn converts_the_structural_schema_as_apiextensions_does() {
        let t = widget(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
            "spec": {"type": "object", "required": ["size", "color"], "properties": {
                "size": {"type": "integer", "minimum": 1, "default": 3},
                "color": {"type": "string", "enum": ["red", "blue"], "nullable": true},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
                "emb": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
                "ex": {"type": "string", "example": "abc"},
            }},
        }}));
        let d = definition(&t);
        let spec = &d["properties"]["spec"];
        assert_eq!(spec["required"], json!(["size"]));
        assert_eq!(
            spec["properties"]["size"],
            json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            spec["properties"]["color"],
            json!({"enum": ["red", "blue"]})
        );
        assert_eq!(
            spec["properties"]["port"],
            json!({"x-kubernetes-int-or-string": true})
        );
        assert_eq!(
            spec["properties"]["free"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(spec["properties"]["ex"], json!({"type": "string"}));
        let emb = &spec["properties"]["emb"];
        assert_eq!(emb["required"], json!(["kind", "apiVersion"]));
        assert_eq!(emb["properties"]["metadata"]["$ref"], OBJECT_META);
        assert_eq!(d["properties"]["metadata"]["$ref"], OBJECT_META);
        assert!(d["properties"]["metadata"].get("properties").is_none());
        assert_eq!(d["properties"]["kind"]["type"], "string");
        assert_eq!(
            d["x-kubernetes-group-version-kind"],
            json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
        );
        assert_eq!(
            d["x-kubernetes-selectable-fields"],
            json!([{"fieldPath": "spec.color"}])
        );
        let list = list_definition(&t, "com.example.v1.Widget");
        assert_eq!(
            list["properties"]["items"]["items"]["$ref"],
            "#/definitions/com.example.v1.Widget"
        );
        assert_eq!(
            list["x-kubernetes-group-version-kind"][0]["kind"],
            "WidgetList"
        );
    }

    #[test]
    fn a_root_that_preserves_unknown_fields_is_only_an_object() {
        let t = widget(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        let d = definition(&t);
        assert_eq!(d["type"], "object");
        assert!(d.get("properties").is_none());
    }
}
