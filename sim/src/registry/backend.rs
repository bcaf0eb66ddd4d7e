//! The storage backend the write and delete pipeline sees: the store, the served types, the
//! admission plugins and the admission webhooks — not the apiserver's, the controllers' or the
//! kubelet's state.

use std::sync::{Arc, RwLock};

use crate::registry::Registry;
use crate::registry::admission::{Admission, WebhookAdmission};
use crate::registry::crd::crd_types;
use crate::status::ApiError;
use crate::storage::Store;

/// The store key of CRDs.
pub const CRD_KEY: &str = "apiextensions.k8s.io/customresourcedefinitions";

/// What the registry's write and delete pipeline and admission work on.
pub struct Backend {
    /// The object store (the state database).
    pub store: Store,
    /// The served resource types (built-in and from CRDs).
    pub registry: Registry,
    /// Admission plugins, called in registration order on every create and update.
    pub admission: RwLock<Vec<Arc<dyn Admission>>>,
    /// The stored admission webhook configurations, cached and called.
    pub webhooks: Box<dyn WebhookAdmission>,
}

impl Backend {
    /// A backend over `store` calling these webhooks, serving the built-in types only until
    /// [`Backend::reload_crds`].
    pub fn new(store: Store, webhooks: Box<dyn WebhookAdmission>) -> Backend {
        Backend {
            store,
            registry: Registry::default(),
            admission: RwLock::new(Vec::new()),
            webhooks,
        }
    }

    /// Re-reads every CRD and serves their types.
    pub fn reload_crds(&self) -> Result<(), ApiError> {
        let (crds, _) = self.store.list(CRD_KEY, None, None)?;
        let types = crds.iter().flat_map(|c| crd_types(&c.object)).collect();
        self.registry.set_crds(types);
        Ok(())
    }
}
