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

mod app_fns;
mod backoff;
mod context;
mod crd;
mod declared;
mod edge;
mod error;
mod handler;
mod health;
pub(crate) mod leader;
mod metrics;
mod options;
mod rbac;
mod registry;
mod run;
pub mod status;
mod triggers;

pub use app_fns::{
    AsyncStreamFn, AttemptOnly, BackoffFn, ErrorAndAttempt, ReconcileAllOn, StreamFn, backoff_fn,
    reconcile_all_on,
};
pub use backoff::{Backoff, DelayFn};
pub use context::{Context, FIELD_MANAGER, ScopeApi};
pub use crd::{UnknownCrdName, crd_name_mismatch, custom_resource_definition};
pub use declared::{
    CustomResourceType, EdgeImpl, FinalizeFn, FinalizeHandler, LevelFn, ReconcileHandler,
    controller, custom_resource, declared_access, finalizing_controller, options,
};
pub use error::ControllerError;
/// For `reconcile_all_on` functions: the trait their result implements, and futures' stream helpers
/// (`stream::unfold`, `stream::iter`, `StreamExt`).
pub use futures::{Stream, StreamExt, stream};
pub use handler::{Controller, HandlerError};
pub use health::HealthServer;
/// When to reconcile next: `Action::requeue(d)`, or `Action::await_change()`.
pub use kube::runtime::controller::Action;
/// Normal or Warning, for [`Context::event`].
pub use kube::runtime::events::EventType;
/// With a finalizer: `Event::Apply(obj)` while the object lives, `Event::Cleanup(obj)` when it is deleted.
pub use kube::runtime::finalizer::Event;
/// The reflector cache of the watched kind ([`Context::store`]).
pub use kube::runtime::reflector::Store;
pub use leader::LeaderElection;
pub use metrics::{ControllerMetrics, Metrics};
pub use options::{ControllerOptions, Kind, Namespaces, OwnerMapping, parse_duration};
pub use rbac::{Access, Grant};
pub use registry::{Controllers, RunOptions};
pub use run::Watched;
pub use triggers::Trigger;
