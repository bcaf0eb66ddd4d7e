//! `Request<T>`: one AdmissionReview v1 request, typed by the resource the webhook handles.

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::admission::{AdmissionRequest, Operation};
use kube::core::{GroupVersionKind, GroupVersionResource, TypeMeta};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What a webhook's resource type must be: a Kubernetes object (k8s-openapi types, `kube::CustomResource`
/// types, or `kube::core::DynamicObject`) that reads and writes as JSON.
pub trait AdmissionObject:
    kube::Resource + DeserializeOwned + Serialize + Clone + Send + Sync + 'static
{
}

impl<T> AdmissionObject for T where
    T: kube::Resource + DeserializeOwned + Serialize + Clone + Send + Sync + 'static
{
}

/// Why an AdmissionReview could not be read (the server answers it with 400 and this message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed AdmissionReview: {0}")]
pub struct MalformedReview(pub String);

/// One admission request for a `T`, as the API server sent it.
#[derive(Debug, Clone)]
pub struct Request<T: kube::Resource> {
    /// Boxed: a k8s-openapi object is kilobytes, and the request moves through the handler's futures.
    inner: Box<AdmissionRequest<T>>,
}

impl<T: AdmissionObject> Request<T> {
    /// Reads a whole AdmissionReview body (`admission.k8s.io/v1`, kind `AdmissionReview`), as the server
    /// does: handy for unit tests of handlers with a fixture file.
    pub fn from_review_json(body: &[u8]) -> Result<Request<T>, MalformedReview> {
        let review: ReviewIn<T> =
            serde_json::from_slice(body).map_err(|e| MalformedReview(e.to_string()))?;
        if review.kind != "AdmissionReview" {
            return Err(MalformedReview(format!(
                "kind is {:?}, expected \"AdmissionReview\"",
                review.kind
            )));
        }
        if !review.api_version.starts_with("admission.k8s.io/") {
            return Err(MalformedReview(format!(
                "apiVersion is {:?}, expected \"admission.k8s.io/v1\"",
                review.api_version
            )));
        }
        let mut request = review
            .request
            .ok_or_else(|| MalformedReview("the review has no `request`".into()))?;
        request.types = TypeMeta {
            api_version: review.api_version,
            kind: review.kind,
        };
        Request::new(request)
    }
}

/// The AdmissionReview as read: kube-core's `AdmissionReview` flattens its `TypeMeta` (serde then
/// buffers `apiVersion` and `kind` as generic content before reading them again) and holds the request
/// unboxed. A `response` in the body is skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", bound(deserialize = "T: DeserializeOwned"))]
struct ReviewIn<T: kube::Resource> {
    api_version: String,
    kind: String,
    request: Option<Box<AdmissionRequest<T>>>,
}

impl<T: kube::Resource> TryFrom<AdmissionRequest<T>> for Request<T> {
    type Error = MalformedReview;

    /// A request must carry the object (or, for DELETE, the old object) and a uid.
    fn try_from(inner: AdmissionRequest<T>) -> Result<Self, MalformedReview> {
        Request::new(Box::new(inner))
    }
}

impl<T: kube::Resource> Request<T> {
    fn new(inner: Box<AdmissionRequest<T>>) -> Result<Self, MalformedReview> {
        if inner.uid.is_empty() {
            return Err(MalformedReview("request.uid is empty".into()));
        }
        if inner.object.is_none() && inner.old_object.is_none() {
            return Err(MalformedReview(
                "request has neither `object` nor `oldObject`".into(),
            ));
        }
        Ok(Request { inner })
    }

    /// The object being admitted: the new object for CREATE, UPDATE and CONNECT; for DELETE, the object
    /// being deleted (the API server sends it as `oldObject`).
    pub fn object(&self) -> &T {
        match (&self.inner.object, &self.inner.old_object) {
            (Some(o), _) | (None, Some(o)) => o,
            // `TryFrom` refuses requests with neither.
            (None, None) => unreachable!("a Request always holds an object"),
        }
    }

    /// The object before the change: set for UPDATE and DELETE.
    pub fn old_object(&self) -> Option<&T> {
        self.inner.old_object.as_ref()
    }

    /// CREATE, UPDATE, DELETE or CONNECT.
    pub fn operation(&self) -> &Operation {
        &self.inner.operation
    }

    /// Who is making the request.
    pub fn user(&self) -> &UserInfo {
        &self.inner.user_info
    }

    /// True for a dry run (`kubectl apply --dry-run=server`, a plan): the change will not be stored, so
    /// the handler must not have side effects.
    pub fn dry_run(&self) -> bool {
        self.inner.dry_run
    }

    /// The namespace of the object, for namespaced resources.
    pub fn namespace(&self) -> Option<&str> {
        self.inner.namespace.as_deref()
    }

    /// The object's name (empty on CREATE when the API server generates it).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The request's uid, echoed in the response.
    pub fn uid(&self) -> &str {
        &self.inner.uid
    }

    /// The kind of the object as sent (for example `apps/v1 Deployment`).
    pub fn kind(&self) -> &GroupVersionKind {
        &self.inner.kind
    }

    /// The resource being requested (for example `apps/v1 deployments`).
    pub fn resource(&self) -> &GroupVersionResource {
        &self.inner.resource
    }

    /// The subresource (`status`, `scale`…), when the request is for one.
    pub fn sub_resource(&self) -> Option<&str> {
        self.inner.sub_resource.as_deref()
    }

    /// The whole request, as kube-core models it.
    pub fn admission_request(&self) -> &AdmissionRequest<T> {
        &self.inner
    }

    pub(crate) fn into_inner(self) -> AdmissionRequest<T> {
        *self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::fixtures::deployment_review as review;
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    #[test]
    fn a_fixture_reads_into_a_typed_request() {
        let body = review(
            "CREATE",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                   "spec": {"selector": {}, "template": {}}}),
        );
        let req = Request::<Deployment>::from_review_json(&body).expect("reads");
        assert_eq!(req.object().metadata.name.as_deref(), Some("web"));
        assert_eq!(req.operation(), &Operation::Create);
        assert_eq!(req.user().username.as_deref(), Some("alice"));
        assert!(req.dry_run());
        assert_eq!(req.namespace(), Some("shop"));
        assert_eq!(req.uid(), "0df28fbd-5f5f-11e8-bc74-36e6bb280816");
        assert!(req.old_object().is_none());
    }

    #[test]
    fn malformed_reviews_say_what_is_wrong() {
        let err = Request::<Deployment>::from_review_json(b"{not json").unwrap_err();
        assert!(
            err.to_string().starts_with("malformed AdmissionReview: "),
            "{err}"
        );
        let no_request = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
        let err = Request::<Deployment>::from_review_json(no_request).unwrap_err();
        assert_eq!(err.0, "the review has no `request`");
        let wrong_kind = review("CREATE", json!({"metadata": {"name": "web"}}))
            .into_iter()
            .map(char::from)
            .collect::<String>()
            .replace("\"AdmissionReview\"", "\"Pod\"");
        let err = Request::<Deployment>::from_review_json(wrong_kind.as_bytes()).unwrap_err();
        assert!(err.0.contains("kind is \"Pod\""), "{err}");
        let null_object = review("CREATE", serde_json::Value::Null);
        let err = Request::<Deployment>::from_review_json(&null_object).unwrap_err();
        assert!(err.0.contains("neither `object` nor `oldObject`"), "{err}");
    }
}
