//! The webhooks as the registry's write and delete pipeline calls them
//! ([`crate::registry::admission::WebhookAdmission`]): the cached configurations of this moment,
//! bound to the hooks their calls dial a Service's pods through.

use std::sync::Arc;

use serde_json::Value;

use super::AdmissionRequest;
use super::config::{Snapshot, Webhooks};
use super::dispatch;
use super::target::Reach;
use crate::hooks::Hooks;
use crate::registry::ResourceType;
use crate::registry::admission::{WebhookAdmission, WebhookSet};
use crate::status::ApiError;
use crate::storage::Store;

/// The configurations of one moment and the hooks the calls dial through.
struct Bound {
    snapshot: Arc<Snapshot>,
    hooks: Arc<Hooks>,
}

impl WebhookAdmission for Webhooks {
    fn current(&self, store: &Store) -> Result<Arc<dyn WebhookSet>, ApiError> {
        Ok(Arc::new(Bound {
            snapshot: Webhooks::current(self, store)?,
            hooks: self.hooks.clone(),
        }))
    }
}

impl WebhookSet for Bound {
    fn may_match(&self, rt: &ResourceType, subresource: &str) -> bool {
        self.snapshot.may_match(rt, subresource)
    }

    fn mutate(
        &self,
        store: &Store,
        req: &AdmissionRequest<'_>,
        object: Option<&mut Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let reach = Reach {
            store,
            hooks: &self.hooks,
        };
        dispatch::mutate(&reach, &self.snapshot, req, object, warnings)
    }

    fn validate(
        &self,
        store: &Store,
        req: &AdmissionRequest<'_>,
        object: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let reach = Reach {
            store,
            hooks: &self.hooks,
        };
        dispatch::validate(&reach, &self.snapshot, req, object, warnings)
    }
}
