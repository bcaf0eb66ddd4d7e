//! The pod subresources that act on a pod as a whole: `binding` (the scheduler's: sets
//! `spec.nodeName` once) and `eviction` (the Eviction API: deletes the pod as a DELETE would), and the
//! legacy `bindings` collection that does what `pods/NAME/binding` does.

use serde_json::{Value, json};

use super::Resolved;
use super::write::{ctx, decode_body};
use crate::apiserver::app::App;
use crate::apiserver::http::{Req, Resp, json as json_resp};
use crate::registry::delete;
use crate::registry::object::{self, Candidate, Mode};
use crate::status::ApiError;

/// Admission (NamespaceLifecycle) of a create: a namespace that does not exist is a 404.
fn namespace_exists(app: &App, ns: &str) -> Result<(), ApiError> {
    match app.backend.store.get("/namespaces", "", ns)? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found("", "namespaces", ns)),
    }
}

/// `Status` of `Success` with code 201, what both answer.
fn created() -> Resp {
    json_resp(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// POST `pods/NAME/binding` (or `bindings` with the pod's name in the body): binds the pod to
/// `target.name`; a pod already bound is a 409.
pub fn bind(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let body = decode_body(req)?;
    // As kube-apiserver: decoded as a Binding (400), admission's namespace (404), then the binding
    // REST's name check (400) before the Binding is validated.
    let own = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(bindings) = app.backend.registry.lookup("", "v1", "bindings") {
        let as_binding = Resolved {
            rt: bindings,
            ns: r.ns.clone(),
            name: None,
            sub: None,
        };
        object::decode_error(&ctx(app, req, &as_binding, "")?, own, &body)?;
    }
    namespace_exists(app, &r.ns)?;
    if own != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let node = body
        .pointer("/target/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ApiError::invalid(
                "",
                "Binding",
                name,
                vec![crate::status::Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value".into(),
                    field: "target.name".into(),
                }],
            )
        })?
        .to_string();
    let c = ctx(app, req, r, "")?;
    object::write(&c, name, Mode::Update, |old| {
        let mut pod = old
            .cloned()
            .ok_or_else(|| ApiError::not_found("", "pods", name))?;
        let bound = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !bound.is_empty() {
            return Err(ApiError::conflict(
                "",
                "pods",
                name,
                &format!("pod {name} is already assigned to node {bound:?}"),
            ));
        }
        pod["spec"]["nodeName"] = json!(node);
        Ok(Candidate::Replace(pod))
    })?;
    Ok(created())
}

/// POST `bindings`: the pod is named by the Binding's own name.
pub fn bind_collection(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    let body = decode_body(req)?;
    let name = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let pods = app
        .backend
        .registry
        .lookup("", "v1", "pods")
        .ok_or_else(ApiError::no_route)?;
    let r = Resolved {
        rt: pods,
        ns: r.ns.clone(),
        name: Some(name.clone()),
        sub: Some("binding".into()),
    };
    bind(app, req, &r, &name)
}

/// POST `pods/NAME/eviction`: deletes the pod with the Eviction's `deleteOptions` (no disruption
/// budgets are simulated).
pub fn evict(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let body = decode_body(req)?;
    namespace_exists(app, &r.ns)?;
    // The eviction REST compares the names before it reads the pod.
    if body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        != name
    {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = body
        .get("deleteOptions")
        .map(|o| bytes::Bytes::from(o.to_string()))
        .unwrap_or_default();
    let opts = super::delete_options::parse(&options, "application/json", &req.query)?;
    delete::delete(&app.backend, &r.rt, &r.ns, name, &opts)?;
    Ok(created())
}
