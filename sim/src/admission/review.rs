//! AdmissionReview `admission.k8s.io/v1`: the request the simulator sends and the checks the real
//! API server makes on the response (apiVersion/kind, uid, patch rules), plus applying a JSONPatch.

use base64::Engine;
use serde_json::{Value, json};

use super::AdmissionRequest;

/// The user every request of the simulator is made as.
pub fn user_info() -> Value {
    json!({"username": "piceli-sim-admin", "groups": ["system:masters", "system:authenticated"]})
}

/// The `options` of a request: CreateOptions, UpdateOptions or DeleteOptions.
pub fn options(req: &AdmissionRequest<'_>) -> Value {
    let kind = match req.operation {
        "CREATE" => "CreateOptions",
        "DELETE" => "DeleteOptions",
        _ => "UpdateOptions",
    };
    let mut o = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if req.dry_run {
        o["dryRun"] = json!(["All"]);
    }
    if req.operation == "DELETE" {
        if let Some(p) = req.propagation {
            o["propagationPolicy"] = json!(p);
        }
    } else if !req.manager.is_empty() {
        o["fieldManager"] = json!(req.manager);
    }
    o
}

/// The AdmissionReview sent to a webhook. `object` is the object being admitted (none for DELETE).
pub fn request(req: &AdmissionRequest<'_>, object: Option<&Value>) -> Value {
    let rt = req.resource;
    let kind = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let resource = json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
    let mut r = json!({
        "uid": req.uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": req.name,
        "operation": req.operation,
        "userInfo": user_info(),
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": req.old.cloned().unwrap_or(Value::Null),
        "dryRun": req.dry_run,
        "options": options(req),
    });
    if !req.subresource.is_empty() {
        r["subResource"] = json!(req.subresource);
        r["requestSubResource"] = json!(req.subresource);
    }
    if rt.namespaced && !req.namespace.is_empty() {
        r["namespace"] = json!(req.namespace);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r})
}

/// A webhook's verdict.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    pub allowed: bool,
    /// `response.status` (code, message, reason), when given.
    pub status: Option<Value>,
    /// Decoded JSONPatch operations.
    pub patch: Option<json_patch::Patch>,
    pub warnings: Vec<String>,
}

/// Parses and checks a response body; errors are worded after the real server's
/// `received invalid webhook response` reasons.
pub fn parse(body: &[u8], uid: &str, mutating: bool) -> Result<Verdict, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let av = review
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
    if av != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {av}, Kind={kind}"
        ));
    }
    let Some(resp) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let got = resp.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let patch_b64 = resp.get("patch").and_then(Value::as_str).unwrap_or("");
    let patch_type = resp.get("patchType").and_then(Value::as_str).unwrap_or("");
    let patch = if patch_b64.is_empty() {
        None
    } else if !mutating {
        return Err("validating webhooks may not return patches".into());
    } else if patch_type.is_empty() {
        return Err("webhook returned response.patch but not response.patchType".into());
    } else if patch_type != "JSONPatch" {
        return Err(format!(
            "webhook returned invalid response.patchType of {patch_type:?}"
        ));
    } else {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(patch_b64)
            .map_err(|e| format!("invalid response.patch: {e}"))?;
        Some(serde_json::from_slice(&raw).map_err(|e| format!("invalid JSON Patch: {e}"))?)
    };
    Ok(Verdict {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: resp.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings: resp
            .get("warnings")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// Applies a webhook's patch; true when the object changed.
pub fn apply_patch(object: &mut Value, patch: &json_patch::Patch) -> Result<bool, String> {
    let mut patched = object.clone();
    json_patch::patch(&mut patched, patch).map_err(|e| e.to_string())?;
    let changed = patched != *object;
    *object = patched;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn review(resp: Value) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}),
        )
        .unwrap_or_default()
    }

    #[test]
    fn responses_are_checked_like_the_real_server() {
        let ok = review(json!({"uid": "u", "allowed": true, "warnings": ["careful"],
                   "patchType": "JSONPatch", "patch": b64(r#"[{"op":"add","path":"/x","value":1}]"#)}));
        let v = parse(&ok, "u", true).expect("valid");
        assert!(v.allowed);
        assert_eq!(v.warnings, ["careful"]);
        let mut obj = json!({});
        assert_eq!(apply_patch(&mut obj, &v.patch.expect("patch")), Ok(true));
        assert_eq!(obj, json!({"x": 1}));
        assert!(
            parse(&ok, "u", false)
                .unwrap_err()
                .contains("may not return patches")
        );
        assert!(parse(&ok, "other", true).unwrap_err().contains("uid"));
        let untyped = review(json!({"uid": "u", "allowed": true, "patch": b64("[]")}));
        assert!(
            parse(&untyped, "u", true)
                .unwrap_err()
                .contains("patchType")
        );
        assert!(
            parse(br#"{"response": {}}"#, "u", true)
                .unwrap_err()
                .contains("AdmissionReview")
        );
        let denied = review(json!({"uid": "u", "allowed": false, "status": {"message": "no"}}));
        let v = parse(&denied, "u", false).expect("valid");
        assert!(!v.allowed);
        assert_eq!(v.status, Some(json!({"message": "no"})));
    }
}
