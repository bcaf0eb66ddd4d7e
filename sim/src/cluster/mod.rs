//! The narrow handle the simulated controllers and the kubelet see the cluster through, as
//! kube-controller-manager's controllers see only a client and informers: the served types, the
//! shared informer lists, reads of one object, writes through the API's write pipeline
//! (`object::write`, `delete::delete`) under a field manager, Events, and the few sim-only things
//! the kubelet and the namespace controller need (the port and exec hooks, the cluster CA, change
//! events for following a log). It hands out neither the store nor the registry nor the server
//! state: the API server makes it from its state, for the controllers' loop and its own streaming
//! handlers.

pub(crate) mod declared;
pub(crate) mod informer;

use std::sync::Arc;

use serde_json::Value;

use crate::hooks::Hooks;
use crate::registry::ResourceType;
use crate::registry::backend::Backend;
use crate::registry::delete::{self, DeleteOptions, ForegroundStep};
use crate::registry::object::{self, Candidate, Mode, WriteCtx};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;
use crate::storage::Event;
use crate::util::{s, uid};
use informer::Informers;

/// What a controller or the kubelet may do to the cluster (cheap to copy: a few references).
#[derive(Clone, Copy)]
pub(crate) struct Cluster<'a> {
    backend: &'a Backend,
    informers: &'a Informers,
    hooks: &'a Hooks,
    ca_pem: &'a str,
}

impl<'a> Cluster<'a> {
    /// The handle on the cluster of this backend, with the shared informer lists, the sim-only
    /// hooks and the cluster CA.
    pub fn new(
        backend: &'a Backend,
        informers: &'a Informers,
        hooks: &'a Hooks,
        ca_pem: &'a str,
    ) -> Cluster<'a> {
        Cluster {
            backend,
            informers,
            hooks,
            ca_pem,
        }
    }

    /// The served type at `group/version/plural`.
    pub fn rt(&self, group: &str, version: &str, plural: &str) -> Result<ResourceType, ApiError> {
        self.backend
            .registry
            .lookup(group, version, plural)
            .ok_or_else(|| {
                ApiError::internal(format!("type {group}/{version}/{plural} not served"))
            })
    }

    /// The served type for a kind at an apiVersion.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        self.backend.registry.by_kind(api_version, kind)
    }

    /// Every served type, built-ins first.
    pub fn all_types(&self) -> Vec<ResourceType> {
        self.backend.registry.all()
    }

    /// Every object of a type, in every namespace, shared with the other controllers: parsed once
    /// per change of the type ([`super::informer::Informers`]). A controller lists only kinds it
    /// declares to watch (`controllers/table.rs`; checked in debug builds: [`declared`]).
    pub fn list(&self, rt: &ResourceType) -> Arc<Vec<Arc<Value>>> {
        let rk = rt.store_key();
        declared::debug_check(&rk);
        self.informers.list(&self.backend.store, &rk)
    }

    /// The objects of a type that name owners, read from the store for this call (not from the
    /// shared lists; the others are not parsed).
    pub fn list_owned(&self, rt: &ResourceType) -> Arc<Vec<Arc<Value>>> {
        let page = self
            .backend
            .store
            .list_raw(&rt.store_key(), None, None, None, |data| {
                Ok(data
                    .contains("\"ownerReferences\"")
                    .then(|| serde_json::from_str::<Value>(data).ok().map(Arc::new))
                    .flatten())
            });
        page.map(|p| Arc::new(p.items.into_iter().map(|(_, _, o)| o).collect()))
            .unwrap_or_default()
    }

    /// The (namespace, name) of the objects of a type put in foreground deletion, read from the
    /// store for this call.
    pub fn foreground_pending(&self, rt: &ResourceType) -> Result<Vec<(String, String)>, ApiError> {
        let (items, _) = self.backend.store.list(&rt.store_key(), None, None)?;
        Ok(items
            .into_iter()
            .filter(|item| delete::foreground_pending(&item.object))
            .map(|item| (item.ns, item.name))
            .collect())
    }

    /// One object as stored now (not from the shared lists), if it exists.
    pub fn get(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<Option<Value>, ApiError> {
        Ok(self.backend.store.get(&rt.store_key(), ns, name)?)
    }

    /// Creates an object.
    pub fn create(
        &self,
        rt: &ResourceType,
        ns: &str,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        let name = s(&obj, "/metadata/name").to_string();
        let c = ctx(self.backend, rt, ns, "", manager);
        object::write(&c, &name, Mode::Create, |_| Ok(Candidate::Replace(obj))).map(|o| o.object)
    }

    /// Updates an object (`sub` "" or "status") by changing the current one with `change`, inside
    /// the write transaction; `change` returning false leaves it alone.
    pub fn update(
        &self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        sub: &str,
        manager: &str,
        change: impl FnOnce(&mut Value) -> bool,
    ) -> Result<(), ApiError> {
        let c = ctx(self.backend, rt, ns, sub, manager);
        object::write(&c, name, Mode::Update, |old| {
            let mut new = old.cloned().unwrap_or(Value::Null);
            if !change(&mut new) {
                return Err(ApiError::bad_request("unchanged"));
            }
            Ok(Candidate::Replace(new))
        })
        .map(|_| ())
    }

    /// Deletes an object, its dependents in the background.
    pub fn remove(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<(), ApiError> {
        self.delete(rt, ns, name, &DeleteOptions::default())
            .map(|_| ())
    }

    /// Deletes an object with these options; returns its last state.
    pub fn delete(
        &self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        delete::delete(self.backend, rt, ns, name, opts)
    }

    /// One garbage-collector step for an owner in foreground deletion (store key, namespace, name).
    pub fn foreground_step(
        &self,
        rk: &str,
        ns: &str,
        name: &str,
    ) -> Result<ForegroundStep, ApiError> {
        delete::foreground_step(self.backend, rk, ns, name)
    }

    /// Records a core/v1 Event about `about` (best effort), as the named component would.
    pub fn event(
        &self,
        about: &Value,
        warning: bool,
        reason: &str,
        message: &str,
        component: &str,
    ) {
        let Some(events) = self.backend.registry.lookup("", "v1", "events") else {
            return;
        };
        let ns = match s(about, "/metadata/namespace") {
            "" => "default",
            n => n,
        };
        let now = crate::time::now_rfc3339();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!("{}.{nanos:x}", s(about, "/metadata/name"));
        let ev = serde_json::json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {
                "apiVersion": s(about, "/apiVersion"), "kind": s(about, "/kind"),
                "namespace": s(about, "/metadata/namespace"), "name": s(about, "/metadata/name"),
                "uid": uid(about), "resourceVersion": s(about, "/metadata/resourceVersion"),
            },
            "reason": reason, "message": message,
            "source": {"component": component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "type": if warning { "Warning" } else { "Normal" },
            "reportingComponent": component, "reportingInstance": "",
        });
        let _ = self.create(&events, ns, ev, component);
    }

    /// The sim-only hooks: pod ports mapped to real addresses, exec handlers, container logs.
    pub fn hooks(&self) -> &'a Hooks {
        self.hooks
    }

    /// The cluster CA (PEM), as published in every namespace's `kube-root-ca.crt`.
    pub fn ca_pem(&self) -> &'a str {
        self.ca_pem
    }

    /// The store's change events from now on (every kind), as a watch would see them.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Event>> {
        self.backend.store.hub().subscribe()
    }
}

/// A write by a controller: not a dry run, unknown fields ignored.
fn ctx<'b>(
    backend: &'b Backend,
    rt: &'b ResourceType,
    ns: &'b str,
    sub: &'b str,
    manager: &str,
) -> WriteCtx<'b> {
    WriteCtx {
        backend,
        rt,
        ns,
        subresource: sub,
        manager: manager.to_string(),
        dry_run: false,
        validation: FieldValidation::Ignore,
        authorize_create: None,
    }
}
