//! create, update (PUT), patch (apply, merge, JSON and strategic merge), delete and deletecollection.

use serde_json::{Value, json};

use super::Resolved;
use super::read::{at_version, list_objects};
use crate::apiserver::app::App;
use crate::apiserver::attributes::Attributes;
use crate::apiserver::http::{Req, Resp, json as json_resp, with_warnings};
use crate::registry::delete;
use crate::registry::object::{self, Candidate, Mode, Outcome, WriteCtx};
use crate::registry::schema::Node;
use crate::registry::smp;
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;

/// The media types a create or update body may have (the serializers kube-apiserver offers).
const BODY_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The patch types of built-in kinds, in the apiserver's order.
const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The patch types of custom resources (no strategic merge patch).
const CRD_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// Decodes a request body: JSON, YAML or (for kubectl's generators) protobuf for POST/PUT, a patch
/// document for PATCH; any other media type is 415 with the apiserver's list.
pub fn decode_body(req: &Req) -> Result<Value, ApiError> {
    decode_body_as(req, "")
}

/// [`decode_body`] for a body that should be a `kind` (named in a body that is not JSON, as
/// kube-apiserver's `transformDecodeError` does).
pub fn decode_body_as(req: &Req, kind: &str) -> Result<Value, ApiError> {
    let ct = req.content_type();
    let accepted = if req.method == http::Method::PATCH {
        PATCH_TYPES
    } else {
        BODY_TYPES
    };
    if !ct.is_empty() && !accepted.contains(&ct) {
        if req.method == http::Method::PATCH {
            // go-restful refuses a PATCH of a type no route consumes before the handler sees it.
            return Err(ApiError::unsupported_patch_type());
        }
        return Err(ApiError::media_type_not_accepted(accepted));
    }
    if ct == "application/vnd.kubernetes.protobuf" {
        return crate::apiserver::proto::decode(&req.body).map_err(|e| match e {
            crate::apiserver::proto::ProtoError::Unsupported(_) => {
                ApiError::unsupported_media_type(ct)
            }
            other => ApiError::bad_request(other.to_string()),
        });
    }
    if ct.contains("protobuf") || ct.contains("cbor") {
        return Err(ApiError::unsupported_media_type(ct));
    }
    if req.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v) => Ok(v),
        Err(json_err) => {
            let text = std::str::from_utf8(&req.body)
                .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
            if ct.contains("yaml") {
                // As kube-apiserver reads YAML (sigs.k8s.io/yaml, YAML 1.1): `0644` is octal, `yes` a boolean.
                piceli_core::include::yaml::from_str(text)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
            } else {
                let go = crate::apiserver::go_json::syntax_error(&req.body)
                    .unwrap_or_else(|| json_err.to_string());
                Err(ApiError::bad_request(
                    if req.method == http::Method::PATCH {
                        format!("error decoding patch: {go}")
                    } else if kind.is_empty() {
                        format!("couldn't get version/kind; json parse error: {go}")
                    } else {
                        format!(
                            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {go} ({})",
                            crate::apiserver::go_json::summary(&req.body)
                        )
                    },
                ))
            }
        }
    }
}

pub(super) fn ctx<'a>(
    app: &'a App,
    req: &Req,
    r: &'a Resolved,
    sub: &'a str,
) -> Result<WriteCtx<'a>, ApiError> {
    let manager = match req.query.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => req.user_agent_manager(),
    };
    Ok(WriteCtx {
        backend: &app.backend,
        rt: &r.rt,
        ns: &r.ns,
        subresource: sub,
        manager,
        dry_run: req.query.dry_run(options_kind(req))?,
        validation: FieldValidation::parse(req.query.get("fieldValidation"))?,
        authorize_create: None,
    })
}

/// The options object a write verb's query parameters decode into (named in validation errors).
pub fn options_kind(req: &Req) -> &'static str {
    match req.method.as_str() {
        "POST" => "CreateOptions",
        "PUT" => "UpdateOptions",
        "PATCH" => "PatchOptions",
        _ => "DeleteOptions",
    }
}

/// The write's options validated as kube-apiserver does before it reads the body (a 422 on the
/// verb's options kind).
pub(super) fn options(req: &Req) -> Result<(), ApiError> {
    let patch_type = (req.method == http::Method::PATCH).then(|| req.content_type());
    crate::apiserver::write_options::check(&req.query, options_kind(req), patch_type)
}

/// A body's media type that no decoder takes: the 415 of [`decode_body`], before anything else is
/// looked at.
pub(super) fn check_body_type(req: &Req) -> Result<(), ApiError> {
    let ct = req.content_type();
    let accepted = if req.method == http::Method::PATCH {
        PATCH_TYPES
    } else {
        BODY_TYPES
    };
    if ct.is_empty() || accepted.contains(&ct) {
        return Ok(());
    }
    if req.method == http::Method::PATCH {
        return Err(ApiError::unsupported_patch_type());
    }
    Err(ApiError::media_type_not_accepted(accepted))
}

/// kube-apiserver's `checkName` for an update: the body names the object (400 when it does not),
/// the name on the URL, and no other namespace than the URL's.
pub(super) fn check_name(body: &Value, url_name: &str, url_ns: &str) -> Result<(), ApiError> {
    let name = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({url_name} based on URL) was undeterminable: name must be provided"
        )));
    }
    if name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    if let Some(ns) = body.pointer("/metadata/namespace").and_then(Value::as_str)
        && !url_ns.is_empty()
        && !ns.is_empty()
        && ns != url_ns
    {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({ns}) does not match the namespace on the URL ({url_ns})"
        )));
    }
    Ok(())
}

/// For a patch other than apply: the object must exist before its patch is read (the store's
/// update answers 404 before it applies the patch).
fn found(old: Option<&Value>, r: &Resolved, name: &str) -> Result<(), ApiError> {
    match old {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(&r.rt.group, &r.rt.plural, name)),
    }
}

fn respond(r: &Resolved, out: Outcome, created_code: u16) -> Resp {
    let code = if out.created { created_code } else { 200 };
    with_warnings(
        json_resp(code, &at_version(&r.rt, out.object)),
        &out.warnings,
    )
}

/// POST to a collection.
pub fn create(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    // As kube-apiserver's create handler: the body's media type (415), the options (422), the body.
    check_body_type(req)?;
    options(req)?;
    let body = decode_body_as(req, &r.rt.kind)?;
    // Admission (NamespaceLifecycle) runs after the body is decoded and before the object is
    // validated: into a namespace that does not exist, the decoder's 400s, else the 404.
    if r.rt.namespaced && app.backend.store.get("/namespaces", "", &r.ns)?.is_none() {
        let own = body
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        object::decode_error(&ctx(app, req, r, "")?, own, &body)?;
        return Err(ApiError::not_found("", "namespaces", &r.ns));
    }
    let name = match body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        Some(n) => n.to_string(),
        None => match body
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            // As names.SimpleNameGenerator: the prefix cut to 58 characters, so the name with its
            // five random ones stays within 63.
            Some(prefix) => format!(
                "{}{}",
                prefix.chars().take(58).collect::<String>(),
                crate::registry::object::random::name_suffix()
            ),
            None if r.rt.strategy().names_itself() => crate::registry::object::new_uid(),
            None => {
                return Err(ApiError::invalid(
                    &r.rt.group,
                    &r.rt.kind,
                    "",
                    crate::registry::validate::name_causes(r.rt.strategy().name_rule(), ""),
                ));
            }
        },
    };
    let mut body = body;
    if let Some(m) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("name".into(), json!(name));
        m.remove("resourceVersion");
    }
    let c = ctx(app, req, r, "")?;
    let out = object::write(&c, &name, Mode::Create, |_| Ok(Candidate::Replace(body)))?;
    Ok(respond(r, out, 201))
}

/// PUT an object (or its status).
pub fn update(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    // As kube-apiserver's update handler: the options (422), the body (415, 400), the body's name
    // against the URL's (400), then the store's key (400 for a name no path segment can be).
    options(req)?;
    let body = decode_body_as(req, &r.rt.kind)?;
    check_name(&body, name, &r.ns)?;
    super::check_path_name(name)?;
    let sub = r.sub.as_deref().unwrap_or("");
    let c = ctx(app, req, r, sub)?;
    let out = object::write(&c, name, Mode::Update, |_| Ok(Candidate::Replace(body)))?;
    Ok(respond(r, out, 201))
}

/// A server-side apply that creates the object needs `create` besides `patch`, as kube-apiserver
/// authorizes the create it turns into: checked by the policy that authorized the request, inside the
/// write once it is known that the object does not exist (nothing is read for it beforehand).
fn authorize_apply_create(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<(), ApiError> {
    let Some(policy) = req.policy.as_deref() else {
        return Ok(());
    };
    if r.sub.is_some() {
        return Ok(());
    }
    let a = Attributes::resource(
        &req.user,
        "create",
        &r.rt.group,
        &r.rt.plural,
        "",
        &r.ns,
        name,
    );
    crate::apiserver::rbac::authorize_by(app, policy, &a)
}

/// PATCH an object (or its status), by content type.
pub fn patch(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let sub = r.sub.as_deref().unwrap_or("");
    let ct = req.content_type().to_string();
    // As kube-apiserver's patch handler: the patch type (415), the options (422), the store's key;
    // a patch other than apply is decoded only once the object is found (a 404 first).
    check_body_type(req)?;
    options(req)?;
    super::check_path_name(name)?;
    let c = ctx(app, req, r, sub)?;
    let is_apply = ct.starts_with("application/apply-patch");
    let mut decoded = if is_apply {
        Some(decode_body(req)?)
    } else {
        None
    };
    let mut body_once = || -> Result<Value, ApiError> {
        match decoded.take() {
            Some(b) => Ok(b),
            None => decode_body(req),
        }
    };
    let out = match ct.as_str() {
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
            if req.query.get("fieldManager").is_none_or(str::is_empty) {
                return Err(ApiError::invalid(
                    "meta.k8s.io",
                    "PatchOptions",
                    "",
                    vec![crate::status::Cause {
                        reason: "FieldValueRequired".into(),
                        message: "Required value: is required for apply patch".into(),
                        field: "fieldManager".into(),
                    }],
                ));
            }
            let force = req.query.flag("force");
            let authorize_create = || authorize_apply_create(app, req, r, name);
            let c = WriteCtx {
                authorize_create: Some(&authorize_create),
                ..c
            };
            let body = body_once()?;
            object::write(&c, name, Mode::Apply, |_| {
                Ok(Candidate::Apply {
                    config: body,
                    force,
                })
            })?
        }
        "application/merge-patch+json" => object::write(&c, name, Mode::Update, |old| {
            let body = found(old, r, name).and_then(|_| body_once())?;
            let mut doc = old.cloned().unwrap_or(Value::Null);
            json_patch::merge(&mut doc, &body);
            if let Some(e) = object::patch_decode_error(&r.rt, &doc) {
                return Err(e);
            }
            Ok(Candidate::Replace(doc))
        })?,
        "application/json-patch+json" => object::write(&c, name, Mode::Update, |old| {
            let body = found(old, r, name).and_then(|_| body_once())?;
            let ops: json_patch::Patch = serde_json::from_value(body).map_err(|e| {
                if e.to_string().starts_with("invalid type: map") {
                    ApiError::bad_request(
                        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
                    )
                } else {
                    ApiError::bad_request(format!("error decoding patch: {e}"))
                }
            })?;
            {
                let mut doc = old.cloned().unwrap_or(Value::Null);
                // kube-apiserver answers an operation that does not apply with the generic 422 of
                // `NewGenericServerResponse`, whatever the operation's own error.
                json_patch_as_apiserver(&mut doc, &ops).map_err(|_| ApiError::generic_invalid())?;
                if let Some(e) = object::patch_decode_error(&r.rt, &doc) {
                    return Err(e);
                }
                Ok(Candidate::Replace(doc))
            }
        })?,
        "application/strategic-merge-patch+json" => {
            if r.rt.crd {
                return Err(ApiError::media_type_not_accepted(CRD_PATCH_TYPES));
            }
            object::write(&c, name, Mode::Update, |old| {
                let body = found(old, r, name).and_then(|_| body_once())?;
                let doc = old.cloned().unwrap_or(Value::Null);
                let patched = smp::apply(&doc, &body, Node::root(&r.rt))
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                Ok(Candidate::Replace(patched))
            })?
        }
        _ => return Err(ApiError::media_type_not_accepted(PATCH_TYPES)),
    };
    Ok(respond(r, out, 201))
}

/// DELETE an object.
pub fn delete(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let opts = super::delete_options::parse(&req.body, req.content_type(), &req.query)?;
    super::check_path_name(name)?;
    // NamespaceLifecycle's admission: the namespaces the cluster itself needs stay.
    if r.rt.group.is_empty()
        && r.rt.kind == "Namespace"
        && matches!(name, "default" | "kube-system" | "kube-public")
    {
        return Err(ApiError::forbidden_resource(
            "",
            "namespaces",
            name,
            "this namespace may not be deleted",
        ));
    }
    let obj = delete::delete(&app.backend, &r.rt, &r.ns, name, &opts)?;
    let ns = if r.rt.namespaced { r.ns.as_str() } else { "" };
    let pending = !opts.dry_run
        && app
            .backend
            .store
            .get(&r.rt.store_key(), ns, name)?
            .is_some_and(|o| o.pointer("/metadata/uid") == obj.pointer("/metadata/uid"));
    if pending || r.rt.strategy().returns_deleted_object() {
        return Ok(json_resp(200, &at_version(&r.rt, obj)));
    }
    if opts.orphan && !opts.dry_run {
        // kube-apiserver answers an orphaning delete with the object as it marks it: the `orphan`
        // finalizer and a deletion time, which its garbage collector then finishes (the sim finishes
        // it at once).
        let mut marked = obj;
        if let Some(meta) = marked.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "deletionTimestamp".into(),
                json!(crate::time::now_rfc3339()),
            );
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(f) = finalizers.as_array_mut() {
                f.push(json!("orphan"));
            }
        }
        return Ok(json_resp(200, &at_version(&r.rt, marked)));
    }
    let uid = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    Ok(json_resp(
        200,
        &crate::status::success_status(&r.rt.group, &r.rt.plural, name, uid),
    ))
}

/// DELETE a collection (with selectors).
pub fn delete_collection(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    // As kube-apiserver's deletecollection handler: the list options first, then the DeleteOptions.
    crate::apiserver::list_options::check(&req.query)?;
    let opts = super::delete_options::parse(&req.body, req.content_type(), &req.query)?;
    let (items, meta) = list_objects(app, req, r)?;
    let mut deleted = Vec::new();
    for item in items {
        let name = item
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ns = item
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match delete::delete(&app.backend, &r.rt, &ns, &name, &opts) {
            Ok(o) => deleted.push(o),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(json_resp(
        200,
        &json!({"kind": format!("{}List", r.rt.kind), "apiVersion": r.rt.api_version(), "metadata": meta, "items": deleted}),
    ))
}

/// RFC 6902 as kube-apiserver applies it (evanphx/json-patch): a `test` for `null` passes when the path
/// is absent, which is how clients (kube's finalizer helper) say "only if there are no finalizers yet".
fn json_patch_as_apiserver(
    doc: &mut Value,
    ops: &json_patch::Patch,
) -> Result<(), json_patch::PatchError> {
    for op in ops.iter() {
        if let json_patch::PatchOperation::Test(t) = op
            && t.value.is_null()
            && doc.pointer(t.path.as_str()).is_none()
        {
            continue;
        }
        // evanphx/json-patch v4 (kube-apiserver's) replaces a missing member of an object as if it
        // were there: the operation adds it.
        if let json_patch::PatchOperation::Replace(r) = op
            && doc.pointer(r.path.as_str()).is_none()
            && let Some((parent, _)) = r.path.as_str().rsplit_once('/')
            && doc.pointer(parent).is_some_and(Value::is_object)
        {
            let add = json_patch::PatchOperation::Add(json_patch::AddOperation {
                path: r.path.clone(),
                value: r.value.clone(),
            });
            json_patch::patch(doc, std::slice::from_ref(&add))?;
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(op))?;
    }
    Ok(())
}

#[cfg(test)]
mod yaml_body_tests {
    use super::*;
    use crate::apiserver::http::Query;

    fn post(content_type: &str, body: &str) -> Req {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_str(content_type).expect("header"),
        );
        Req {
            method: http::Method::POST,
            path: "/api/v1/namespaces/default/configmaps".into(),
            query: Query::default(),
            headers,
            body: bytes::Bytes::from(body.to_string()),
            user: Default::default(),
            policy: None,
        }
    }

    #[test]
    fn a_yaml_body_is_read_as_kubernetes_reads_it() {
        let body = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nimmutable: yes\n\
                    data: {mode: 0744, off: ~}\n";
        let v = decode_body(&post("application/yaml", body)).expect("decodes");
        assert_eq!(v["immutable"], json!(true), "YAML 1.1 booleans");
        assert_eq!(v["data"]["mode"], json!(484), "YAML 1.1 octal");
        let data = v["data"].as_object().expect("data");
        assert!(
            data.contains_key("false") && !data.contains_key("off"),
            "{data:?}"
        );
        // A server-side apply body is YAML too.
        let mut patch = post(
            "application/apply-patch+yaml",
            "spec: {replicas: 0x10, paused: on}\n",
        );
        patch.method = http::Method::PATCH;
        let v = decode_body(&patch).expect("decodes");
        assert_eq!(v["spec"], json!({"replicas": 16, "paused": true}));
    }
}
