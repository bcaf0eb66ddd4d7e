//! Controllers on any resource, on kube's runtime (watcher, reflector, `Controller`, finalizer helper),
//! with what it lacks: per-object backoff with jitter, per-object timers, edge handlers
//! (`on_create` / `on_update(old, new)` / `on_delete` / `on_timer`), several controllers on one resource,
//! Lease-based leader election, metrics, and status/event/owner-reference helpers. See
//! `docs/controllers.md`.
//!
//! ```
//! use std::sync::Arc;
//! use piceli_runtime::controller::{Action, Context, ControllerOptions, Controllers};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! pub async fn reconcile(cm: Arc<ConfigMap>, cx: Context) -> Result<Action, kube::Error> {
//!     println!("{:?} in {:?}", cm.metadata.name, cx.namespace());
//!     Ok(Action::await_change())
//! }
//! let controllers = Controllers::new("shop").reconcile("config", ControllerOptions::default(), reconcile);
//! assert_eq!(controllers.names(), ["config"]);
//! ```

mod access;
#[cfg(feature = "operator")]
mod app_fns;
#[cfg(feature = "operator")]
mod backoff;
#[cfg(feature = "operator")]
mod context;
mod crd;
#[cfg(feature = "operator")]
mod declared;
#[cfg(feature = "operator")]
mod edge;
#[cfg(feature = "operator")]
mod error;
#[cfg(feature = "operator")]
mod handler;
#[cfg(feature = "operator")]
mod health;
#[cfg(feature = "operator")]
pub(crate) mod leader;
#[cfg(feature = "operator")]
mod metrics;
#[cfg(feature = "operator")]
mod options;
mod rbac;
#[cfg(feature = "operator")]
mod registry;
#[cfg(feature = "operator")]
mod run;
#[cfg(feature = "operator")]
pub mod status;
#[cfg(feature = "operator")]
mod triggers;

pub use access::declared_access;
#[cfg(feature = "operator")]
pub use app_fns::{
    AsyncStreamFn, AttemptOnly, BackoffFn, ErrorAndAttempt, ReconcileAllOn, StreamFn, backoff_fn,
    reconcile_all_on,
};
#[cfg(feature = "operator")]
pub use backoff::{Backoff, DelayFn};
#[cfg(feature = "operator")]
pub use context::{Context, FIELD_MANAGER, ScopeApi};
pub use crd::{
    CustomResourceType, UnknownCrdName, crd_name_mismatch, custom_resource,
    custom_resource_definition,
};
#[cfg(feature = "operator")]
pub use declared::{
    EdgeImpl, FinalizeFn, FinalizeHandler, LevelFn, ReconcileHandler, controller,
    finalizing_controller, options,
};
#[cfg(feature = "operator")]
pub use error::ControllerError;
#[cfg(feature = "operator")]
/// For `reconcile_all_on` functions: the trait their result implements, and futures' stream helpers
/// (`stream::unfold`, `stream::iter`, `StreamExt`).
pub use futures::{Stream, StreamExt, stream};
#[cfg(feature = "operator")]
pub use handler::{Controller, HandlerError};
#[cfg(feature = "operator")]
pub use health::HealthServer;
#[cfg(feature = "operator")]
/// When to reconcile next: `Action::requeue(d)`, or `Action::await_change()`.
pub use kube::runtime::controller::Action;
#[cfg(feature = "operator")]
/// Normal or Warning, for [`Context::event`].
pub use kube::runtime::events::EventType;
#[cfg(feature = "operator")]
/// With a finalizer: `Event::Apply(obj)` while the object lives, `Event::Cleanup(obj)` when it is deleted.
pub use kube::runtime::finalizer::Event;
#[cfg(feature = "operator")]
/// The reflector cache of the watched kind ([`Context::store`]).
pub use kube::runtime::reflector::Store;
#[cfg(feature = "operator")]
pub use leader::LeaderElection;
#[cfg(feature = "operator")]
pub use metrics::{ControllerMetrics, Metrics};
#[cfg(feature = "operator")]
pub use options::{ControllerOptions, Kind, Namespaces, OwnerMapping, parse_duration};
pub use rbac::{Access, Grant};
#[cfg(feature = "operator")]
pub use registry::{Controllers, RunOptions};
#[cfg(feature = "operator")]
pub use run::Watched;
#[cfg(feature = "operator")]
pub use triggers::Trigger;
