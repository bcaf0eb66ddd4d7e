//! The admission seam of the write and delete pipeline, as kube-apiserver's registry store calls
//! the admission chain it is handed: after defaulting, registered plugins may mutate the object,
//! and after validation they may reject it; the stored webhook configurations are called at the
//! same points (and on DELETE). The registry defines what it calls; `crate::admission` implements
//! the webhooks (configurations, HTTPS calls) and re-exports the plugin API.

use std::sync::Arc;

use serde_json::Value;

use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::Store;

/// The admission webhooks the pipeline calls (the admission module's `Webhooks` implements them).
pub trait WebhookAdmission: Send + Sync {
    /// The webhooks in force now. Must not be called inside a store transaction.
    fn current(&self, store: &Store) -> Result<Arc<dyn WebhookSet>, ApiError>;
}

/// The webhook configurations at one point in time, in calling order.
pub trait WebhookSet: Send + Sync {
    /// Whether any webhook could be called for this resource and subresource (any operation).
    fn may_match(&self, rt: &ResourceType, subresource: &str) -> bool;

    /// Runs the mutating webhooks; `object` is `None` for DELETE (patches are then ignored).
    fn mutate(
        &self,
        store: &Store,
        req: &AdmissionRequest<'_>,
        object: Option<&mut Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError>;

    /// Runs the validating webhooks; `object` is `None` for DELETE.
    fn validate(
        &self,
        store: &Store,
        req: &AdmissionRequest<'_>,
        object: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError>;
}

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
