//! Calling the admission webhooks of one request, as the real API server does: mutating webhooks in
//! order (configuration name, then position), with one reinvocation round for `IfNeeded` webhooks
//! when a later webhook changed the object; validating webhooks in parallel (one thread each when
//! more than one matches), the first denial or failure in their order winning. `failurePolicy`,
//! `timeoutSeconds` and `sideEffects` on dry runs are honoured with the real server's errors.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::Value;

use super::AdmissionRequest;
use super::config::{Snapshot, Webhook};
use super::log::{self as request_log, WebhookCall};
use super::target::Reach;
use super::{client, matching, review, target};
use crate::status::ApiError;
use crate::storage::Store;

/// Whether a webhook selects this request.
fn applies(
    store: &Store,
    hook: &Webhook,
    req: &AdmissionRequest<'_>,
    object: Option<&Value>,
) -> bool {
    hook.rules
        .iter()
        .any(|r| matching::rule_matches(r, req.operation, req.resource, req.subresource))
        && matching::object_matches(&hook.object_selector, object, req.old)
        && matching::namespace_matches(
            &hook.namespace_selector,
            req.resource,
            object,
            req.old,
            || store.get("/namespaces", "", req.namespace).ok().flatten(),
        )
}

/// Runs the mutating webhooks; `object` is `None` for DELETE (patches are then ignored).
pub fn mutate(
    reach: &Reach<'_>,
    snapshot: &Snapshot,
    req: &AdmissionRequest<'_>,
    mut object: Option<&mut Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let mut invoked_reinvocable: Vec<usize> = Vec::new();
    let mut reinvoke: HashSet<usize> = HashSet::new();
    for round in 0..2 {
        if round == 1 && reinvoke.is_empty() {
            break;
        }
        for (i, hook) in snapshot.mutating.iter().enumerate() {
            if round == 1 && !reinvoke.contains(&i) {
                continue;
            }
            if !applies(reach.store, hook, req, object.as_deref()) {
                continue;
            }
            let patch = call(reach, hook, req, object.as_deref(), true, warnings)?;
            let changed = match (patch, object.as_deref_mut()) {
                (Some(p), Some(obj)) => review::apply_patch(obj, &p).map_err(|e| {
                    ApiError::internal(format!(
                        "failed to apply the patch of webhook {:?}: {e}",
                        hook.name
                    ))
                })?,
                _ => false,
            };
            if round == 0 {
                if changed {
                    reinvoke.extend(invoked_reinvocable.drain(..));
                }
                if hook.reinvoke_if_needed {
                    invoked_reinvocable.push(i);
                }
            }
        }
    }
    Ok(())
}

/// Runs the validating webhooks; `object` is `None` for DELETE.
pub fn validate(
    reach: &Reach<'_>,
    snapshot: &Snapshot,
    req: &AdmissionRequest<'_>,
    object: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let hooks: Vec<&Webhook> = snapshot
        .validating
        .iter()
        .filter(|h| applies(reach.store, h, req, object))
        .collect();
    if let [hook] = hooks.as_slice() {
        return call(reach, hook, req, object, false, warnings).map(|_| ());
    }
    let results: Vec<(Result<(), ApiError>, Vec<String>)> = std::thread::scope(|s| {
        let running: Vec<_> = hooks
            .iter()
            .map(|hook| {
                s.spawn(move || {
                    let mut w = Vec::new();
                    let r = call(reach, hook, req, object, false, &mut w).map(|_| ());
                    (r, w)
                })
            })
            .collect();
        running
            .into_iter()
            .map(|t| {
                t.join().unwrap_or_else(|_| {
                    (Err(ApiError::internal("webhook call panicked")), Vec::new())
                })
            })
            .collect()
    });
    let mut first_error = None;
    for (r, w) in results {
        warnings.extend(w);
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Calls one matching webhook. `Ok(Some(patch))` when a mutating webhook patched; `Ok(None)` when
/// it admitted unchanged (or failed with `failurePolicy: Ignore`). The call is a line of the request
/// log when the log is on.
fn call(
    reach: &Reach<'_>,
    hook: &Webhook,
    req: &AdmissionRequest<'_>,
    object: Option<&Value>,
    mutating: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<json_patch::Patch>, ApiError> {
    if req.dry_run && !hook.dry_run_safe {
        return Err(ApiError::bad_request(format!(
            "admission webhook {:?} does not support dry run",
            hook.name
        )));
    }
    let started = Instant::now();
    let mut status = None;
    let answer = exchange(reach, hook, req, object, mutating, &mut status);
    if request_log::enabled() {
        request_log::webhook_call(&WebhookCall {
            webhook: &hook.name,
            mutating,
            operation: req.operation,
            resource: &req.resource.plural,
            url: &hook.client.url(),
            status,
            outcome: match &answer {
                Ok(v) if !v.allowed => "denied",
                Ok(v) if v.patch.is_some() => "patched",
                Ok(_) => "allowed",
                Err(_) if hook.ignore_failure => "ignored",
                Err(_) => "failed",
            },
            error: answer.as_ref().err().map(String::as_str),
            latency: started.elapsed(),
        });
    }
    match answer {
        Ok(verdict) => {
            warnings.extend(verdict.warnings);
            if verdict.allowed {
                Ok(verdict.patch)
            } else {
                Err(denial(&hook.name, verdict.status.as_ref()))
            }
        }
        Err(_) if hook.ignore_failure => Ok(None),
        Err(why) => Err(ApiError::internal(format!(
            "failed calling webhook {:?}: {why}",
            hook.name
        ))),
    }
}

/// Sends the AdmissionReview and reads the webhook's verdict, or why the call failed (worded as the
/// real server words it after `failed calling webhook "NAME": `); `status` gets the HTTP status of
/// the response, if one came.
fn exchange(
    reach: &Reach<'_>,
    hook: &Webhook,
    req: &AdmissionRequest<'_>,
    object: Option<&Value>,
    mutating: bool,
    status: &mut Option<u16>,
) -> Result<review::Verdict, String> {
    if !hook.speaks_v1 {
        return Err("webhook does not accept known AdmissionReview versions".into());
    }
    let deadline = Instant::now() + hook.timeout;
    let pool = hook
        .pool
        .as_ref()
        .map_err(|e| format!("failed to call webhook: {e}"))?;
    let to = target::resolve(reach, &hook.client, hook.timeout.as_secs())
        .map_err(|e| format!("failed to call webhook: {e}"))?;
    let body = serde_json::to_vec(&review::request(req, object))
        .map_err(|e| format!("failed to call webhook: encoding AdmissionReview: {e}"))?;
    let (code, resp) = client::post(pool, &to, body, deadline)
        .map_err(|e| format!("failed to call webhook: {e}"))?;
    *status = Some(code);
    if !(200..300).contains(&code) {
        let text = String::from_utf8_lossy(&resp);
        return Err(format!(
            "failed to call webhook: an error on the server ({:?}) has prevented the request from succeeding",
            text.trim()
        ));
    }
    review::parse(&resp, &req.uid, mutating)
        .map_err(|e| format!("received invalid webhook response: {e}"))
}

/// The Status of a denial: the webhook's code (at least 400, default 403) and reason, the message
/// prefixed with `admission webhook "NAME" denied the request`.
fn denial(webhook: &str, status: Option<&Value>) -> ApiError {
    let get = |k: &str| status.and_then(|s| s.get(k));
    let code = get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(403);
    let reason = get("reason").and_then(Value::as_str).unwrap_or("");
    let message = get("message").and_then(Value::as_str).unwrap_or("");
    let denied = format!("admission webhook {webhook:?} denied the request");
    let message = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    ApiError {
        code,
        reason: known_reason(reason),
        message,
        details: Box::default(),
    }
}

/// The `metav1.StatusReason` values, as static strings; others are dropped.
fn known_reason(reason: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    KNOWN.iter().find(|k| **k == reason).copied().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn denials_read_like_the_real_server() {
        let e = denial(
            "deny.example.com",
            Some(&json!({"message": "no latest", "code": 400})),
        );
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "admission webhook \"deny.example.com\" denied the request: no latest"
        );
        let e = denial("d", Some(&json!({"code": 200, "reason": "Forbidden"})));
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request: Forbidden"
        );
        let e = denial("d", None);
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request without explanation"
        );
    }
}
