//! OpenAPI v3: the `/openapi/v3` index and one document per group-version, built from the embedded
//! schemas (and CRD schemas), with the paths and parameters kubectl inspects to decide that the
//! server validates fields itself.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use bytes::Bytes;

use crate::apiserver::discovery::groups;
use crate::apiserver::openapi_captured::{captured, sha512_hex};
use crate::registry::{ResourceType, SchemaSource};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

/// The path of a group-version's document below `/openapi/v3/`.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The component name of a CRD kind's schema.
fn crd_component(t: &ResourceType) -> String {
    let rev: Vec<&str> = t.group.split('.').rev().collect();
    format!("{}.{}.{}", rev.join("."), t.version, t.kind)
}

/// The component schema name for a type.
pub fn component_name(t: &ResourceType) -> String {
    match &t.schema {
        SchemaSource::Builtin(n) => n.to_string(),
        SchemaSource::Crd(_) => crd_component(t),
    }
}

/// Whether a group-version is one of kube-apiserver's own (its document is the captured one).
fn is_builtin_gv(types: &[ResourceType], group: &str, version: &str) -> bool {
    types.iter().any(|t| {
        t.group == group && t.version == version && matches!(t.schema, SchemaSource::Builtin(_))
    })
}

/// `/openapi/v3`: every document and its URL with the document's hash — kube-apiserver's own
/// documents (group-versions, groups, discovery, `/version`, OIDC) and one per custom resource
/// group-version.
pub fn index(types: &[ResourceType]) -> Value {
    let mut paths = Map::new();
    let captured = captured();
    for (p, doc) in &captured.v3 {
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", doc.hash)}),
        );
    }
    for (group, versions) in groups(types) {
        for v in versions {
            if is_builtin_gv(types, &group, &v) {
                continue;
            }
            let p = gv_path(&group, &v);
            let gv: Vec<&ResourceType> = types
                .iter()
                .filter(|t| t.group == group && t.version == v)
                .collect();
            // A hash of what the document is made from: it changes when the CRD does.
            let hash = sha512_hex(format!("{gv:?}").as_bytes());
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
            );
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v3/PATH`: kube-apiserver's own document for its APIs, a document made from the CRDs
/// for a custom resource group-version, `None` for anything else.
pub fn document_text(types: &[ResourceType], path: &str) -> Option<Bytes> {
    if let Some(doc) = captured().v3.get(path) {
        return Some(doc.text.clone());
    }
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let doc = document(types, &group, &version)?;
    Some(Bytes::from(doc.to_string()))
}

fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "$ref" {
                    if let Some(name) = child.as_str().and_then(|r| r.rsplit('/').next()) {
                        out.insert(name.to_string());
                    }
                } else {
                    collect_refs(child, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}

fn param(name: &str, kind: &str) -> Value {
    json!({"name": name, "in": "query", "schema": {"type": kind, "uniqueItems": true}})
}

fn operation(
    t: &ResourceType,
    action: &str,
    op_id: &str,
    params: &[(&str, &str)],
    schema: &str,
) -> Value {
    let parameters: Vec<Value> = params.iter().map(|(n, k)| param(n, k)).collect();
    let content =
        json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}});
    json!({
        "operationId": op_id,
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": content}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
    })
}

const WRITE_PARAMS: &[(&str, &str)] = &[
    ("dryRun", "string"),
    ("fieldManager", "string"),
    ("fieldValidation", "string"),
];
const PATCH_PARAMS: &[(&str, &str)] = &[
    ("dryRun", "string"),
    ("fieldManager", "string"),
    ("fieldValidation", "string"),
    ("force", "boolean"),
];

/// A path parameter, declared on its path item as kube-apiserver does.
fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "description": description, "required": true,
        "schema": {"type": "string", "uniqueItems": true}})
}

fn paths_for(t: &ResourceType, paths: &mut Map<String, Value>) {
    let base = if t.group.is_empty() {
        format!("/api/{}", t.version)
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    let coll = if t.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", t.plural)
    } else {
        format!("{base}/{}", t.plural)
    };
    let namespace = t.namespaced.then(|| {
        path_param(
            "namespace",
            "object name and auth scope, such as for teams and projects",
        )
    });
    let name = path_param("name", &format!("name of the {}", t.kind));
    let coll_params: Vec<Value> = namespace.iter().cloned().collect();
    let item_params: Vec<Value> = std::iter::once(name).chain(namespace).collect();
    let schema = component_name(t);
    let list_schema = format!("{schema}List");
    let id = |verb: &str| format!("{verb}{}", t.kind);
    paths.insert(
        coll.clone(),
        json!({
            "get": operation(t, "list", &id("list"), &[("labelSelector", "string"), ("fieldSelector", "string"), ("limit", "integer"), ("continue", "string"), ("watch", "boolean")], &list_schema),
            "post": operation(t, "post", &id("create"), WRITE_PARAMS, &schema),
            "delete": operation(t, "deletecollection", &id("deletecollection"), &[("dryRun", "string")], &format!("{META}.Status")),
            "parameters": coll_params,
        }),
    );
    let mut item = json!({
        "get": operation(t, "get", &id("read"), &[], &schema),
        "put": operation(t, "put", &id("replace"), WRITE_PARAMS, &schema),
        "patch": operation(t, "patch", &id("patch"), PATCH_PARAMS, &schema),
        "parameters": item_params,
    });
    if t.status_subresource {
        // The status subresource reads, replaces and patches; it is never deleted.
        paths.insert(format!("{coll}/{{name}}/status"), item.clone());
    }
    item["delete"] = operation(
        t,
        "delete",
        &id("delete"),
        &[("dryRun", "string")],
        &format!("{META}.Status"),
    );
    paths.insert(format!("{coll}/{{name}}"), item);
}

fn crd_schema(t: &ResourceType, body: &Value) -> Value {
    let mut s = body.clone();
    if let Value::Object(m) = &mut s {
        let props = m.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(p) = props {
            p.insert("apiVersion".into(), json!({"type": "string"}));
            p.insert("kind".into(), json!({"type": "string"}));
            p.insert(
                "metadata".into(),
                json!({"$ref": format!("#/components/schemas/{META}.ObjectMeta")}),
            );
        }
        m.insert(
            "x-kubernetes-group-version-kind".into(),
            json!([{"group": t.group, "version": t.version, "kind": t.kind}]),
        );
    }
    s
}

/// The document of one custom resource group-version, if served, made from its CRDs.
pub fn document(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    let gv: Vec<&ResourceType> = types
        .iter()
        .filter(|t| t.group == group && t.version == version)
        .collect();
    if gv.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let mut wanted: BTreeSet<String> = [
        format!("{META}.Status"),
        format!("{META}.DeleteOptions"),
        format!("{META}.ObjectMeta"),
        format!("{META}.ListMeta"),
    ]
    .into_iter()
    .collect();
    for t in &gv {
        paths_for(t, &mut paths);
        let name = component_name(t);
        match &t.schema {
            SchemaSource::Builtin(n) => {
                wanted.insert(n.to_string());
                wanted.insert(format!("{n}List"));
            }
            SchemaSource::Crd(body) => {
                let s = crd_schema(t, body);
                collect_refs(&s, &mut wanted);
                schemas.insert(name.clone(), s);
                schemas.insert(
                    format!("{name}List"),
                    json!({"type": "object", "properties": {
                        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                        "items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{name}")}},
                        "metadata": {"$ref": format!("#/components/schemas/{META}.ListMeta")}},
                        "x-kubernetes-group-version-kind": [{"group": t.group, "version": t.version, "kind": format!("{}List", t.kind)}]}),
                );
            }
        }
    }
    let mut queue: Vec<String> = wanted.into_iter().collect();
    while let Some(name) = queue.pop() {
        if schemas.contains_key(&name) {
            continue;
        }
        // kube-apiserver's own schema, with its descriptions and enums.
        let Some(def) = captured().v3_schema(&name) else {
            continue;
        };
        let mut refs = BTreeSet::new();
        collect_refs(&def, &mut refs);
        queue.extend(refs.into_iter().filter(|r| !schemas.contains_key(r)));
        schemas.insert(name, def);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn documents_carry_patch_operations_with_field_validation() {
        let types = Registry::default().all();
        let doc = document(&types, "apps", "v1").expect("apps/v1");
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "Deployment"
        );
        assert!(
            patch["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"] == "fieldValidation")
        );
        assert!(doc["components"]["schemas"]["io.k8s.api.core.v1.Container"].is_object());
        let names: Vec<&str> =
            doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
        assert_eq!(names, ["name", "namespace"]);
        let idx = index(&types);
        assert!(
            idx["paths"]["api/v1"]["serverRelativeURL"]
                .as_str()
                .is_some_and(|u| u.starts_with("/openapi/v3/api/v1?hash="))
        );
    }
}
