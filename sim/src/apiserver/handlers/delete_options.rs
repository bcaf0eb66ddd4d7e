//! `DeleteOptions` as a DELETE request carries them (body and query parameters), parsed and
//! validated into what the registry's deletion takes ([`DeleteOptions`]).

use serde_json::{Value, json};

use crate::apiserver::query::{Query, dry_run_values};
use crate::registry::delete::DeleteOptions;
use crate::status::{ApiError, Cause};

/// The media types a DeleteOptions body may have.
const BODY_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// `DeleteOptions` from the request body (a DeleteOptions object in `content_type`) or, as
/// kube-apiserver reads them, from the query parameters when there is no body.
pub(crate) fn parse(
    body: &[u8],
    content_type: &str,
    query: &Query,
) -> Result<DeleteOptions, ApiError> {
    let has_body = !body.iter().all(u8::is_ascii_whitespace);
    if has_body && !content_type.is_empty() && !BODY_TYPES.contains(&content_type) {
        return Err(ApiError::media_type_not_accepted(BODY_TYPES));
    }
    let empty = Query::default();
    let query = if has_body { &empty } else { query };
    let v: Value = if !has_body {
        json!({})
    } else if content_type == "application/yaml" {
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::bad_request("invalid DeleteOptions: the body is not UTF-8"))?;
        piceli_core::include::yaml::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    // Decoding (the integer's 400) comes before validation (422).
    let grace_period = match v.get("gracePeriodSeconds").and_then(Value::as_i64) {
        Some(g) => Some(g),
        None => query.int64("gracePeriodSeconds")?,
    };
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(String::from);
    let policy =
        s("/propagationPolicy").or_else(|| query.get("propagationPolicy").map(String::from));
    let orphan_flag = v
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let body_dry: Vec<&str> = v
        .get("dryRun")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let dry = dry_run_values(&body_dry, "DeleteOptions")? || query.dry_run("DeleteOptions")?;
    if let Some(p) = &policy
        && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
    {
        // `ValidateDeleteOptions`: 422 naming the options.
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!(
                    "Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                ),
                field: "propagationPolicy".into(),
            }],
        ));
    }
    Ok(DeleteOptions {
        grace_period,
        foreground: policy.as_deref() == Some("Foreground"),
        uid: s("/preconditions/uid"),
        resource_version: s("/preconditions/resourceVersion"),
        orphan: policy.as_deref() == Some("Orphan") || orphan_flag,
        policy_absent: policy.is_none() && v.get("orphanDependents").is_none(),
        dry_run: dry,
    })
}
