//! Fidelity with kube-apiserver 1.33 where real clients notice (issue 13), each case driven by a real
//! client: kubectl (own KUBECACHEDIR), kube 5, the official Python client, or kopf.

#[path = "../fidelity/apply_preconditions.rs"]
mod apply_preconditions;
#[path = "../fidelity/bookmarks.rs"]
mod bookmarks;
#[path = "../fidelity/bool_params.rs"]
mod bool_params;
#[path = "../fidelity/defaults.rs"]
mod defaults;
#[path = "../fidelity/deletion.rs"]
mod deletion;
#[path = "../fidelity/explain.rs"]
mod explain;
#[path = "../fidelity/handler_chain.rs"]
mod handler_chain;
#[path = "../fidelity/keepalive.rs"]
mod keepalive;
#[path = "../fidelity/kopf.rs"]
mod kopf;
#[path = "../fidelity/openapi_v2.rs"]
mod openapi_v2;
#[path = "../fidelity/resource_versions.rs"]
mod resource_versions;
#[path = "../fidelity/robustness.rs"]
mod robustness;
#[path = "../fidelity/tables.rs"]
mod tables;
#[path = "../fidelity/times.rs"]
mod times;
#[path = "../fidelity/validation.rs"]
mod validation;
