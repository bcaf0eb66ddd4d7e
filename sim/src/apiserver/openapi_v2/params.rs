//! The parameter lists a custom resource's operations carry in the OpenAPI v2 document: list
//! options, write options, the delete options and the `Patch` and object bodies, referring to the
//! shared `parameters` of kube-apiserver's document by the names it gives them.

use serde_json::{Value, json};

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
