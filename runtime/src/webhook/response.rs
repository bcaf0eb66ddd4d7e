//! The AdmissionReview v1 response body: allowed or denied, warnings, and a base64 JSON Patch.
//!
//! kube-core's `AdmissionResponse` serializes `patch` as an array of numbers; API servers read the base64
//! string `encoding/json` writes, so the response is written here.

use base64::Engine;
use serde::Serialize;

/// Where a response goes: the review's apiVersion and the request's uid (always echoed).
#[derive(Debug, Clone)]
pub(crate) struct ReplyTo {
    pub api_version: String,
    pub uid: String,
}

/// The answer to one request, before it is written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub allowed: bool,
    /// `status` of a refusal: HTTP-like code, reason and message.
    pub refusal: Option<(u16, &'static str, String)>,
    pub patch: Option<json_patch::Patch>,
    pub warnings: Vec<String>,
}

impl Answer {
    pub fn allowed(warnings: Vec<String>) -> Answer {
        Answer {
            allowed: true,
            refusal: None,
            patch: None,
            warnings,
        }
    }

    pub fn denied(message: String, warnings: Vec<String>) -> Answer {
        Answer {
            allowed: false,
            refusal: Some((403, "Forbidden", message)),
            patch: None,
            warnings,
        }
    }

    pub fn failed(message: String, warnings: Vec<String>) -> Answer {
        Answer {
            allowed: false,
            refusal: Some((500, "InternalError", message)),
            patch: None,
            warnings,
        }
    }

    pub fn patched(patch: json_patch::Patch, warnings: Vec<String>) -> Answer {
        let patch = (!patch.0.is_empty()).then_some(patch);
        Answer {
            allowed: true,
            refusal: None,
            patch,
            warnings,
        }
    }

    /// The response body.
    pub fn encode(&self, to: &ReplyTo) -> Vec<u8> {
        let patch = self.patch.as_ref().map(|p| {
            let json = serde_json::to_vec(p).unwrap_or_else(|_| b"[]".to_vec());
            base64::engine::general_purpose::STANDARD.encode(json)
        });
        let review = ReviewOut {
            api_version: &to.api_version,
            kind: "AdmissionReview",
            response: ResponseOut {
                uid: &to.uid,
                allowed: self.allowed,
                status: self
                    .refusal
                    .as_ref()
                    .map(|(code, reason, message)| StatusOut {
                        status: "Failure",
                        code: *code,
                        reason,
                        message,
                    }),
                patch_type: patch.as_ref().map(|_| "JSONPatch"),
                patch,
                warnings: &self.warnings,
            },
        };
        // Plain strings, numbers and a derived Patch: serializing cannot fail.
        serde_json::to_vec(&review).unwrap_or_default()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReviewOut<'a> {
    api_version: &'a str,
    kind: &'static str,
    response: ResponseOut<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseOut<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<StatusOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

#[derive(Serialize)]
struct StatusOut<'a> {
    status: &'static str,
    code: u16,
    reason: &'a str,
    message: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn to() -> ReplyTo {
        ReplyTo {
            api_version: "admission.k8s.io/v1".into(),
            uid: "u-1".into(),
        }
    }

    #[test]
    fn a_denial_echoes_the_uid_with_a_forbidden_status() {
        let body = Answer::denied("no".into(), vec!["w".into()]).encode(&to());
        let v: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(
            v,
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                   "response": {"uid": "u-1", "allowed": false, "warnings": ["w"],
                                "status": {"status": "Failure", "code": 403, "reason": "Forbidden", "message": "no"}}})
        );
    }

    #[test]
    fn a_patch_is_base64_json_with_its_type() {
        let ops: json_patch::Patch =
            serde_json::from_value(json!([{"op": "add", "path": "/a", "value": 1}])).expect("ops");
        let body = Answer::patched(ops, vec![]).encode(&to());
        let v: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["response"]["patchType"], "JSONPatch");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(v["response"]["patch"].as_str().expect("patch"))
            .expect("base64");
        assert_eq!(
            serde_json::from_slice::<Value>(&raw).expect("json"),
            json!([{"op": "add", "path": "/a", "value": 1}])
        );
        let empty = Answer::patched(json_patch::Patch(vec![]), vec![]).encode(&to());
        let v: Value = serde_json::from_slice(&empty).expect("json");
        assert_eq!(v["response"], json!({"uid": "u-1", "allowed": true}));
    }
}
