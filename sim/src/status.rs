//! Kubernetes `Status` error bodies, shaped like the real API server's.

use serde_json::{Value, json};

/// One `details.causes` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The cause's reason (`FieldValueInvalid`, `FieldManagerConflict`, …).
    pub reason: String,
    /// A human-readable message.
    pub message: String,
    /// The field the cause is about (`spec.replicas`), or empty.
    pub field: String,
}

/// An API error: an HTTP code and the `Status` object the real server would send.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// The HTTP status code (also the Status' `code`).
    pub code: u16,
    /// The Status' `reason` (`NotFound`, `Conflict`, `Invalid`, …).
    pub reason: &'static str,
    /// The Status' `message`.
    pub message: String,
    /// `details`; empty parts are left out.
    pub details: Box<Details>,
}

/// The `details` of a Status.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Details {
    /// The API group of the object.
    pub group: String,
    /// The kind (or resource) of the object.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// The individual causes (field errors, apply conflicts).
    pub causes: Vec<Cause>,
    /// Sent even when empty (`"details": {}`), as the errors kube-apiserver makes with empty
    /// `StatusDetails` (`NewGenericServerResponse`: an unknown resource, 405, 415, a forbidden path).
    pub always: bool,
    /// Not a Status at all: the plain-text `404 page not found` of Go's mux, which kube-apiserver
    /// answers for paths outside its API (an unknown API group, `/no/such/path`).
    pub page_not_found: bool,
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: Box::default(),
        }
    }

    fn with_empty_details(mut self) -> Self {
        self.details.always = true;
        self
    }

    /// Go's mux `404 page not found` (text, not a Status): a path no API serves.
    pub fn page_not_found() -> Self {
        let mut e = Self::new(404, "NotFound", "404 page not found");
        e.details.page_not_found = true;
        e
    }

    fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        self.details.group = group.to_string();
        self.details.kind = kind.to_string();
        self.details.name = name.to_string();
        self
    }

    /// `<resource>.<group> "name" not found` (404 NotFound).
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// A path that names no resource (404 NotFound with the generic message).
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_empty_details()
    }

    /// 409 AlreadyExists.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// 409 Conflict with the given explanation (stale resourceVersion, failed precondition...).
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    /// 409 Conflict from server-side apply, message and causes already composed.
    pub fn apply_conflict(
        group: &str,
        kind: &str,
        name: &str,
        message: String,
        causes: Vec<Cause>,
    ) -> Self {
        // As kube-apiserver's: the details carry the causes only.
        let _ = (group, kind, name);
        let mut e = Self::new(409, "Conflict", message);
        e.details.causes = causes;
        e
    }

    /// 422 Invalid with field causes: `Kind.group "name" is invalid: field: detail, ...`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let parts: Vec<String> = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .collect();
        let what = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let joined = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{what} \"{name}\" is invalid: {joined}"),
        )
        .with_details(group, kind, name);
        e.details.causes = causes;
        e
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 405 MethodNotAllowed, as go-restful's router answers a method a path does not serve.
    pub fn method_not_allowed(_what: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_empty_details()
    }

    /// 415 for a PATCH whose Content-Type is not a patch type (go-restful's own wording).
    pub fn unsupported_patch_type() -> Self {
        Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type").with_empty_details()
    }

    /// An error with no reason (`StatusReasonUnknown`), as some of kube-apiserver's internal errors.
    pub fn unknown(code: u16, message: impl Into<String>) -> Self {
        Self::new(code, "", message)
    }

    /// 422 as `NewGenericServerResponse` makes it (a JSON patch that does not apply).
    pub fn generic_invalid() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
        .with_empty_details()
    }

    /// 503 ServiceUnavailable.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// 410 for a list at a resourceVersion the history no longer has.
    pub fn gone_list() -> Self {
        Self::new(
            410,
            "Expired",
            "The resourceVersion for the provided list is too old.",
        )
    }

    /// 406 for an `Accept` the server cannot answer in.
    pub fn not_acceptable() -> Self {
        Self::new(
            406,
            "NotAcceptable",
            "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )
        .with_empty_details()
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(ct: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/apply-patch+yaml, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json (got {ct:?})"
            ),
        )
    }

    /// 415 UnsupportedMediaType as the apiserver's negotiation words it, listing what it accepts.
    pub fn media_type_not_accepted(accepts: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepts.join(", ")
            ),
        )
    }

    /// 413 RequestEntityTooLarge (a body over the server's limit).
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 431 for a request line and headers over the server's limit (Go's net/http answers this one
    /// without a Status; this one carries the same words in one).
    pub fn header_too_large(limit: usize) -> Self {
        Self::new(
            431,
            "RequestHeaderFieldsTooLarge",
            format!(
                "Request Header Fields Too Large: the request line and headers are longer than {limit} bytes"
            ),
        )
    }

    /// 410 Expired (used inside watch streams as an ERROR event).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 403 Forbidden (e.g. creating in a namespace that is terminating).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 403 Forbidden for a resource, as `NewForbidden` words it: `pods "web" is forbidden: WHY`
    /// (`deployments.apps is forbidden: …` without a name; `forbidden: …` for a path).
    pub fn forbidden_resource(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let message = match (qualified.is_empty(), name.is_empty()) {
            (true, _) => {
                return Self::new(403, "Forbidden", format!("forbidden: {why}"))
                    .with_empty_details();
            }
            (false, true) => format!("{qualified} is forbidden: {why}"),
            (false, false) => format!("{qualified} \"{name}\" is forbidden: {why}"),
        };
        Self::new(403, "Forbidden", message).with_details(group, resource, name)
    }

    /// 504 for a list or watch from a resourceVersion the store has not reached (after waiting for
    /// it), as the watch cache answers: reason Timeout, cause `ResourceVersionTooLarge`.
    pub fn resource_version_too_large(requested: u64, current: u64) -> Self {
        let mut e = Self::new(
            504,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        );
        e.details.causes = vec![Cause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        }];
        e
    }

    /// 500 InternalError.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Some(m) = status.as_object_mut()
        {
            m.remove("reason");
        }
        let d = &self.details;
        let mut details = serde_json::Map::new();
        if !d.name.is_empty() {
            details.insert("name".into(), json!(d.name));
        }
        if !d.group.is_empty() {
            details.insert("group".into(), json!(d.group));
        }
        if !d.kind.is_empty() {
            details.insert("kind".into(), json!(d.kind));
        }
        if !d.causes.is_empty() {
            let causes: Vec<Value> = d
                .causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect();
            details.insert("causes".into(), Value::Array(causes));
        }
        if !details.is_empty() || d.always {
            status["details"] = Value::Object(details);
        }
        status
    }
}

fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// A `Status` object reporting success (returned by some deletes).
pub fn success_status(group: &str, kind: &str, name: &str, uid: &str) -> Value {
    let mut details = json!({"name": name, "group": group, "kind": kind, "uid": uid});
    if group.is_empty()
        && let Some(m) = details.as_object_mut()
    {
        m.remove("group");
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_the_real_message() {
        let e = ApiError::not_found("apps", "deployments", "web");
        assert_eq!(e.message, "deployments.apps \"web\" not found");
        let s = e.to_status();
        assert_eq!(s["code"], 404);
        assert_eq!(s["details"]["kind"], "deployments");
        assert_eq!(
            ApiError::not_found("", "configmaps", "x").message,
            "configmaps \"x\" not found"
        );
    }

    #[test]
    fn invalid_lists_causes() {
        let e = ApiError::invalid(
            "",
            "ConfigMap",
            "Bad_Name",
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value".into(),
                field: "metadata.name".into(),
            }],
        );
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value"
        );
        assert_eq!(
            e.to_status()["details"]["causes"][0]["field"],
            "metadata.name"
        );
    }
}
