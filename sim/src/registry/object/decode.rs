//! The typed decoder's checks of a write's body, as kube-apiserver's codecs make them before any
//! strategy runs: apiVersion and kind, namespace and name against the URL, JSON types (400, or 422
//! for a patch's result) and unknown fields per `fieldValidation`.

use serde_json::Value;

use super::{WriteCtx, parts};
use crate::registry::ResourceType;
use crate::registry::schema::Node;
use crate::registry::validate::{self, FieldValidation};
use crate::status::ApiError;

/// A JSON or merge patch whose result the typed decoder refuses (a wrong JSON type for a built-in
/// kind): kube-apiserver's patcher answers 422 with the patched object as the invalid value of
/// `patch` (`NewInvalid(GroupKind{}, "", [Invalid(patch, patchedJSON, err)])`), not the 400 a PUT
/// of the same body gets.
pub fn patch_decode_error(rt: &ResourceType, patched: &Value) -> Option<ApiError> {
    if rt.crd {
        return None;
    }
    let mut probe = patched.clone();
    let findings = validate::check(&mut probe, Node::root(rt));
    let first = findings.type_errors.first()?;
    let text = serde_json::to_string(patched).ok()?;
    let quoted = serde_json::to_string(&text).ok()?;
    Some(ApiError::invalid(
        "",
        "",
        "",
        vec![crate::status::Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {quoted}: {first}"),
            field: "patch".into(),
        }],
    ))
}

/// The decoder's checks of a body alone (its 400s), for a handler that answers them before what
/// follows decoding in kube-apiserver (admission's namespace check).
pub fn decode_error(ctx: &WriteCtx<'_>, name: &str, body: &Value) -> Result<(), ApiError> {
    decode_checks(ctx, name, &mut body.clone(), &mut Vec::new())
}

pub(super) fn decode_checks(
    ctx: &WriteCtx<'_>,
    name: &str,
    body: &mut Value,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let rt = ctx.rt;
    if !body.is_object() {
        return Err(ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: expected an object",
            rt.kind, rt.version, rt.kind
        )));
    }
    if let Some(av) = body.get("apiVersion").and_then(Value::as_str)
        && av != rt.api_version()
        && !(rt.crd && av.starts_with(&format!("{}/", rt.group)))
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if let Some(k) = body.get("kind").and_then(Value::as_str)
        && k != rt.kind
    {
        let av = body
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| rt.api_version());
        let registered = ctx
            .backend
            .registry
            .all()
            .iter()
            .any(|t| t.kind == k && t.api_version() == av);
        return Err(ApiError::bad_request(parts::kind_mismatch(
            rt, body, k, registered,
        )));
    }
    if let Some(n) = body.pointer("/metadata/namespace").and_then(Value::as_str)
        && rt.namespaced
        && !n.is_empty()
        && n != ctx.ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let Some(n) = body.pointer("/metadata/name").and_then(Value::as_str)
        && !n.is_empty()
        && n != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    let findings = validate::check(body, Node::root(rt));
    let what = format!(
        "{} in version {:?} cannot be handled as a {}",
        rt.kind, rt.version, rt.kind
    );
    // A custom resource is decoded as unstructured JSON: wrong types are found by its schema's
    // validation (422 Invalid), not by the decoder.
    if let Some(first) = findings.type_errors.first().filter(|_| !rt.crd) {
        return Err(ApiError::bad_request(format!("{what}: {first}")));
    }
    if !findings.unknown.is_empty() {
        let list: Vec<String> = findings
            .unknown
            .iter()
            .map(|u| format!("unknown field {u:?}"))
            .collect();
        match ctx.validation {
            FieldValidation::Strict => {
                return Err(ApiError::bad_request(format!(
                    "{what}: strict decoding error: {}",
                    list.join(", ")
                )));
            }
            FieldValidation::Warn => warnings.extend(list),
            FieldValidation::Ignore => {}
        }
    }
    Ok(())
}
