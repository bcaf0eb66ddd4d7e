//! The handler shapes: level-based functions (`reconcile(obj, cx)`, or `(Event::Apply | Event::Cleanup,
//! cx)` with a finalizer) and the edge-style [`Controller`] trait (`on_create` / `on_update(old, new)` /
//! `on_delete` / `on_timer`, every method optional), erased to one form the runner calls.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;

use super::context::Context;

/// A handler's error, as the runner keeps it: the handler's `E: Display` message (a kube API error's
/// message without the `Debug` dump of its status).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HandlerError(pub String);

impl HandlerError {
    pub(crate) fn from_display(e: impl Display) -> Self {
        HandlerError(crate::logging::words(&e))
    }
}

/// An edge-style controller of `K`: each method runs when the object is created, changed (labels,
/// annotations or anything but `status` and other metadata), deleted, or when its timer (`every:`) is due.
/// Every method is optional. Implementations write plain `async fn`:
///
/// ```
/// use piceli_runtime::controller::{Context, Controller};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// pub struct Audit;
/// impl Controller<ConfigMap> for Audit {
///     type Error = kube::Error;
///     async fn on_create(&self, cm: &ConfigMap, cx: &Context) -> Result<(), kube::Error> {
///         println!("created {:?} in {:?}", cm.metadata.name, cx.namespace());
///         Ok(())
///     }
/// }
/// ```
///
/// `on_delete` is reliable (the controller holds a finalizer until it succeeds) when the declaration
/// says `finalizer`; otherwise it is best-effort: it runs when the watch reports the deletion, or when a
/// re-list finds the object gone, but not for objects deleted while the operator was not running.
pub trait Controller<K>: Send + Sync + 'static {
    /// Any error that displays (kube's errors work with `?`).
    type Error: Display + Send;

    /// The object appeared (or, without a finalizer, was found when the operator started).
    fn on_create(
        &self,
        obj: &K,
        cx: &Context,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (obj, cx);
        async { Ok(()) }
    }

    /// The object changed from `old` to `new` (status-only changes do not count).
    fn on_update(
        &self,
        old: &K,
        new: &K,
        cx: &Context,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (old, new, cx);
        async { Ok(()) }
    }

    /// The object is being deleted (with a finalizer: before it goes; without: after it went).
    fn on_delete(
        &self,
        obj: &K,
        cx: &Context,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (obj, cx);
        async { Ok(()) }
    }

    /// The object's timer (`every:`) is due.
    fn on_timer(
        &self,
        obj: &K,
        cx: &Context,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (obj, cx);
        async { Ok(()) }
    }
}

/// Which edge of an object's life an edge handler is called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    Create,
    Update,
    Delete,
    Timer,
}

/// [`Controller`] with its futures boxed and its error erased.
pub(crate) trait EdgeHandler<K>: Send + Sync + 'static {
    fn call<'a>(
        &'a self,
        edge: Edge,
        old: Option<&'a K>,
        obj: &'a K,
        cx: &'a Context,
    ) -> BoxFuture<'a, Result<(), HandlerError>>;
}

impl<K, C> EdgeHandler<K> for C
where
    C: Controller<K>,
    K: Send + Sync + 'static,
{
    fn call<'a>(
        &'a self,
        edge: Edge,
        old: Option<&'a K>,
        obj: &'a K,
        cx: &'a Context,
    ) -> BoxFuture<'a, Result<(), HandlerError>> {
        Box::pin(async move {
            let result = match (edge, old) {
                (Edge::Create, _) => self.on_create(obj, cx).await,
                (Edge::Update, Some(old)) => self.on_update(old, obj, cx).await,
                (Edge::Update, None) => self.on_create(obj, cx).await,
                (Edge::Delete, _) => self.on_delete(obj, cx).await,
                (Edge::Timer, _) => self.on_timer(obj, cx).await,
            };
            result.map_err(HandlerError::from_display)
        })
    }
}

/// A level-based reconcile function, erased.
pub(crate) type LevelFn<K> =
    Arc<dyn Fn(Arc<K>, Context) -> BoxFuture<'static, Result<Action, HandlerError>> + Send + Sync>;
/// A level-based function with a finalizer (`Event::Apply | Event::Cleanup`), erased.
pub(crate) type FinalizeFn<K> = Arc<
    dyn Fn(Event<K>, Context) -> BoxFuture<'static, Result<Action, HandlerError>> + Send + Sync,
>;

/// How a registered controller handles its objects.
pub(crate) enum Handling<K> {
    Level(LevelFn<K>),
    Finalize(FinalizeFn<K>),
    Edge(Arc<dyn EdgeHandler<K>>),
}

impl<K> Clone for Handling<K> {
    fn clone(&self) -> Self {
        match self {
            Handling::Level(f) => Handling::Level(f.clone()),
            Handling::Finalize(f) => Handling::Finalize(f.clone()),
            Handling::Edge(h) => Handling::Edge(h.clone()),
        }
    }
}

pub(crate) fn level<K, F, Fut, E>(f: F) -> LevelFn<K>
where
    F: Fn(Arc<K>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Display + 'static,
{
    Arc::new(move |obj, cx| {
        let fut = f(obj, cx);
        Box::pin(async move { fut.await.map_err(HandlerError::from_display) })
    })
}

pub(crate) fn finalize<K, F, Fut, E>(f: F) -> FinalizeFn<K>
where
    F: Fn(Event<K>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Display + 'static,
{
    Arc::new(move |ev, cx| {
        let fut = f(ev, cx);
        Box::pin(async move { fut.await.map_err(HandlerError::from_display) })
    })
}
