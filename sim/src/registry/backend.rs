//! The storage backend the write and delete pipeline and admission see: the store, the served
//! types, the admission plugins and webhook configurations, and the port hooks webhook calls dial
//! through — not the apiserver's or the controllers' state.

use std::sync::{Arc, RwLock};

use crate::registry::Registry;
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
    pub admission: RwLock<Vec<Arc<dyn crate::admission::Admission>>>,
    /// The stored admission webhook configurations, cached.
    pub webhooks: crate::admission::Webhooks,
    /// Sim-only hooks: pod ports mapped to real local addresses.
    pub hooks: crate::kubelet::hooks::Hooks,
}

impl Backend {
    /// A backend over `store`, serving the built-in types only until [`Backend::reload_crds`].
    pub fn new(store: Store) -> Backend {
        Backend {
            store,
            registry: Registry::default(),
            admission: RwLock::new(Vec::new()),
            webhooks: crate::admission::Webhooks::default(),
            hooks: crate::kubelet::hooks::Hooks::default(),
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
