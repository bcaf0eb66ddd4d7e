//! The shared `parameters` of the OpenAPI v2 document (by the names kube-apiserver 1.33 gives
//! them) and the parameter lists its operations carry: list options, write options, the delete
//! options and the `Patch` and object bodies.

use serde_json::{Map, Value, json};

use super::paths::META;

/// The shared parameters, by the names kube-apiserver 1.33 gives them.
const PARAMETERS: &[(&str, &str, &str)] = &[
    (
        "allowWatchBookmarks-HC2hJt-J",
        "allowWatchBookmarks",
        "boolean",
    ),
    ("continue-QfD61s0i", "continue", "string"),
    ("fieldManager-7c6nTn1T", "fieldManager", "string"),
    ("fieldManager-Qy4HdaTW", "fieldManager", "string"),
    ("fieldSelector-xIcQKXFG", "fieldSelector", "string"),
    ("force-tOGGb0Yi", "force", "boolean"),
    (
        "gracePeriodSeconds--K5HaBOS",
        "gracePeriodSeconds",
        "integer",
    ),
    (
        "ignoreStoreReadErrorWithClusterBreakingPotential-QbNkfIqj",
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
    ),
    ("labelSelector-5Zw57w4C", "labelSelector", "string"),
    ("limit-1NfNmdNH", "limit", "integer"),
    ("orphanDependents-uRB25kX5", "orphanDependents", "boolean"),
    ("pretty-tJGM1-ng", "pretty", "string"),
    ("propagationPolicy-6jk3prlO", "propagationPolicy", "string"),
    ("resourceVersion-5WAnf1kx", "resourceVersion", "string"),
    (
        "resourceVersionMatch-t8XhRHeC",
        "resourceVersionMatch",
        "string",
    ),
    ("sendInitialEvents-rLXlEK_k", "sendInitialEvents", "boolean"),
    ("timeoutSeconds-yvYezaOC", "timeoutSeconds", "integer"),
    ("watch-XNNPZGbK", "watch", "boolean"),
];

pub(super) const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks-HC2hJt-J",
    "continue-QfD61s0i",
    "fieldSelector-xIcQKXFG",
    "labelSelector-5Zw57w4C",
    "limit-1NfNmdNH",
    "resourceVersion-5WAnf1kx",
    "resourceVersionMatch-t8XhRHeC",
    "sendInitialEvents-rLXlEK_k",
    "timeoutSeconds-yvYezaOC",
    "watch-XNNPZGbK",
];

pub(super) const DELETE_PARAMS: &[&str] = &[
    "gracePeriodSeconds--K5HaBOS",
    "ignoreStoreReadErrorWithClusterBreakingPotential-QbNkfIqj",
    "orphanDependents-uRB25kX5",
    "propagationPolicy-6jk3prlO",
];

/// `#/parameters/...` definitions (`namespace` and the `DeleteOptions` and `Patch` bodies too).
pub fn parameters() -> Map<String, Value> {
    let mut out = Map::new();
    for (key, name, kind) in PARAMETERS {
        out.insert(
            key.to_string(),
            json!({"uniqueItems": true, "type": kind, "name": name, "in": "query"}),
        );
    }
    out.insert(
        "namespace-vgWSWtn3".into(),
        json!({"uniqueItems": true, "type": "string", "description": "object name and auth scope, such as for teams and projects", "name": "namespace", "in": "path", "required": true}),
    );
    out.insert(
        "body-2Y1dVQaQ".into(),
        json!({"name": "body", "in": "body", "schema": {"$ref": format!("#/definitions/{META}.DeleteOptions")}}),
    );
    out.insert(
        "body-78PwaGsr".into(),
        json!({"name": "body", "in": "body", "required": true, "schema": {"$ref": format!("#/definitions/{META}.Patch")}}),
    );
    out
}

pub(super) fn reference(key: &str) -> Value {
    json!({"$ref": format!("#/parameters/{key}")})
}

pub(super) fn query(name: &str) -> Value {
    json!({"uniqueItems": true, "type": "string", "name": name, "in": "query"})
}

pub(super) fn body(schema: &str) -> Value {
    json!({"name": "body", "in": "body", "required": true, "schema": {"$ref": format!("#/definitions/{schema}")}})
}

pub(super) fn write_params(body_schema: &str) -> Vec<Value> {
    vec![
        body(body_schema),
        query("dryRun"),
        reference("fieldManager-Qy4HdaTW"),
        query("fieldValidation"),
    ]
}

pub(super) fn patch_params() -> Vec<Value> {
    vec![
        reference("body-78PwaGsr"),
        query("dryRun"),
        reference("fieldManager-7c6nTn1T"),
        query("fieldValidation"),
        reference("force-tOGGb0Yi"),
    ]
}

pub(super) fn name_param(kind: &str) -> Value {
    json!({"uniqueItems": true, "type": "string", "description": format!("name of the {kind}"), "name": "name", "in": "path", "required": true})
}
