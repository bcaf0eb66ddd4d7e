//! The admission seam of the write pipeline: after defaulting, registered plugins may mutate the
//! object, and after validation they may reject it — where the real API server calls mutating and
//! validating admission. The stored Mutating- and ValidatingWebhookConfigurations are honoured at
//! the same points: mutating webhooks after the plugins' `mutate`, validating webhooks after the
//! plugins' `validate` (and both on DELETE).

mod client;
mod config;
mod dispatch;
mod first_bytes;
mod go_x509;
pub(crate) mod matching;
mod pool;
mod review;
mod target;
mod verify;

use serde_json::Value;

use crate::registry::ResourceType;
use crate::status::ApiError;

pub(crate) use config::{Snapshot, Webhooks};
pub(crate) use dispatch::{mutate as mutate_webhooks, validate as validate_webhooks};
pub(crate) use target::{pod_port, selected_pod_address};

/// What is being admitted.
pub struct AdmissionRequest<'a> {
    /// `CREATE`, `UPDATE` or `DELETE` (plugins see only the first two).
    pub operation: &'static str,
    /// The resource type of the object.
    pub resource: &'a ResourceType,
    /// The object's namespace (`""` for cluster-scoped types).
    pub namespace: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// `""`, `status` or `scale`.
    pub subresource: &'a str,
    /// The stored object before this write (updates only).
    pub old: Option<&'a Value>,
    /// Whether the request is a dry run (`dryRun=All`): nothing is stored.
    pub dry_run: bool,
    /// The field manager of the request.
    pub manager: &'a str,
    /// The request's uid, sent to webhooks (empty when no webhook can match).
    pub uid: String,
    /// DELETE only: `Orphan` or `Background`.
    pub propagation: Option<&'static str>,
}

/// An admission plugin. Both steps default to admitting the object unchanged.
pub trait Admission: Send + Sync {
    /// May change the object (runs after defaulting, before validation).
    fn mutate(&self, _req: &AdmissionRequest<'_>, _object: &mut Value) -> Result<(), ApiError> {
        Ok(())
    }

    /// May reject the object (runs after validation); an error is returned to the client as is.
    fn validate(&self, _req: &AdmissionRequest<'_>, _object: &Value) -> Result<(), ApiError> {
        Ok(())
    }
}

/// A rejection worded like the real server's admission denials (403 Forbidden).
pub fn denied(req: &AdmissionRequest<'_>, plugin: &str, why: &str) -> ApiError {
    let what = if req.resource.group.is_empty() {
        req.resource.plural.clone()
    } else {
        format!("{}.{}", req.resource.plural, req.resource.group)
    };
    ApiError::forbidden(format!(
        "{what} {:?} is forbidden: admission plugin {plugin:?} denied the request: {why}",
        req.name
    ))
}
