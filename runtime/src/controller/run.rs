//! One controller on kube's runtime: a reflector over a watcher per namespace feeding kube's
//! `Controller`, the handler called through kube's finalizer helper when the declaration holds one,
//! per-object backoff as the error policy, timers as requeues, and deletions seen by the watch passed to
//! edge handlers.

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller as KubeController};
use kube::runtime::finalizer::{Error as FinalizerError, Event, finalizer};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument;

use super::backoff::Failures;
use super::context::{Context, ScopeApi, Shared};
use super::edge::{Due, EdgeState, key_of};
use super::handler::{Edge, EdgeHandler, HandlerError, Handling};
use super::metrics::ControllerMetrics;
use super::options::{ControllerOptions, Namespaces};

/// What the object types of controllers need.
pub trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static
{
}
impl<K> Watched for K where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// Where a controller runs: the client, the operator's namespace, this process's identity.
#[derive(Clone)]
pub(crate) struct RunEnv {
    pub client: Client,
    pub operator_namespace: String,
    pub identity: String,
}

/// The shutdown signal of one leadership term (shared by every watch of every controller).
pub(crate) type Stop = futures::future::Shared<futures::channel::oneshot::Receiver<()>>;

/// One registered controller, ready to be started for each leadership term.
pub(crate) struct Registered<K: Watched> {
    pub name: String,
    pub finalizer_name: String,
    pub options: ControllerOptions,
    pub handling: Handling<K>,
    pub edge: Arc<EdgeState<K>>,
    pub failures: Arc<Failures>,
    pub metrics: Arc<ControllerMetrics>,
}

/// What one watch's reconciles share.
struct Run<K: Watched> {
    reg: Arc<Registered<K>>,
    shared: Arc<Shared>,
}

impl<K: Watched> Registered<K>
where
    K::Scope: ScopeApi,
{
    /// The RBAC this controller needs.
    pub fn grants(&self, operator_namespace: &str) -> Vec<super::rbac::Grant> {
        let namespaces = match (&self.options.namespaces, <K::Scope as ScopeApi>::NAMESPACED) {
            (_, false) | (Namespaces::All, _) => vec![None],
            (Namespaces::Operator, true) => vec![Some(operator_namespace.to_string())],
            (Namespaces::List(list), true) => list.iter().cloned().map(Some).collect(),
        };
        super::rbac::grants(&super::rbac::Needs {
            group: &K::group(&()),
            plural: &K::plural(&()),
            namespaces,
            finalizer: self.options.finalizer,
            status: self.options.writes_status,
            writes: &self.options.writes,
            related: self.related(),
        })
    }

    /// The kinds that trigger this controller (`owns`, `watches`): (group, plural, namespaced).
    fn related(&self) -> Vec<(String, String, bool)> {
        let owns = self.options.owns.iter();
        let watches = self.options.watches.iter().map(|(k, _)| k);
        owns.chain(watches)
            .map(|k| {
                (
                    k.resource.group.clone(),
                    k.resource.plural.clone(),
                    k.namespaced,
                )
            })
            .collect()
    }

    /// The watches of this controller: one per namespace it covers.
    pub fn start(self: &Arc<Self>, env: &RunEnv, stop: Stop) -> Vec<BoxFuture<'static, ()>> {
        let namespaces: Vec<Option<String>> = match &self.options.namespaces {
            Namespaces::All => vec![None],
            Namespaces::Operator => vec![Some(env.operator_namespace.clone())],
            Namespaces::List(list) => list.iter().cloned().map(Some).collect(),
        };
        namespaces
            .into_iter()
            .map(|ns| {
                let api: Api<K> = <K::Scope as ScopeApi>::api(env.client.clone(), ns.as_deref());
                // Counted unsynced here, before the watch is spawned: counted inside it, a health check
                // between the spawn and the task's first poll saw no watch at all and said ready.
                self.metrics.watching(1);
                self.clone().watch(api, env.clone(), stop.clone()).boxed()
            })
            .collect()
    }

    async fn watch(self: Arc<Self>, api: Api<K>, env: RunEnv, stop: Stop) {
        let (reader, writer) = reflector::store::<K>();
        let shared = Context::shared(
            env.client.clone(),
            &env.operator_namespace,
            &self.name,
            Some(env.identity.clone()),
            Box::new(reader.clone()),
        );
        let mut config = watcher::Config::default();
        if let Some(labels) = &self.options.labels {
            config = config.labels(labels);
        }
        // The first InitDone marks the cache synced (the watch was counted unsynced by `start`). (Not `Store::wait_until_ready`: kube's own
        // applier waits on it too, and its one-shot channel wakes only the last waiter.)
        let synced = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let synced_at_end = synced.clone();
        let deletions = self.clone();
        let delete_cx = shared.clone();
        let delete_reader = reader.clone();
        let watch_namespace = api.namespace().map(str::to_string);
        let trigger_namespace = watch_namespace.clone();
        let stream = reflector::reflector(writer, watcher::watcher(api, config))
            .default_backoff()
            .then(move |event| {
                let reg = deletions.clone();
                let shared = delete_cx.clone();
                let reader = delete_reader.clone();
                let namespace = watch_namespace.clone();
                let synced = synced.clone();
                async move {
                    if let Ok(WatchEvent::InitDone) = &event
                        && !synced.swap(true, std::sync::atomic::Ordering::Relaxed)
                    {
                        reg.metrics.watching(-1);
                    }
                    if let Ok(ev) = &event {
                        reg.deleted(ev, &reader, &shared, namespace.as_deref())
                            .await;
                    }
                    event
                }
            })
            .applied_objects()
            .inspect({
                let metrics = self.metrics.clone();
                move |applied| {
                    if let Ok(obj) = applied {
                        metrics.queued(key_of(obj));
                    }
                }
            });
        let run = Arc::new(Run {
            reg: self.clone(),
            shared,
        });
        let mut controller_config = ControllerConfig::default();
        if self.options.concurrency > 0 {
            controller_config = controller_config.concurrency(self.options.concurrency);
        }
        let controller = KubeController::for_stream(stream, reader)
            .with_config(controller_config)
            .graceful_shutdown_on(stop.map(|_| ()));
        super::triggers::attach(
            controller,
            &self.options,
            &env.client,
            trigger_namespace.as_deref(),
        )
        .run(reconcile::<K>, error_policy::<K>, run)
        .for_each(|result| {
            let name = &self.name;
            let metrics = &self.metrics;
            async move {
                if let Err(e) = result {
                    match e {
                        kube::runtime::controller::Error::ObjectNotFound(gone) => {
                            let key = match &gone.namespace {
                                Some(ns) => format!("{ns}/{}", gone.name),
                                None => gone.name.clone(),
                            };
                            metrics.dequeued(&key);
                        }
                        kube::runtime::controller::Error::ReconcilerFailed(..) => {}
                        other => tracing::error!(
                            code = %piceli_core::codes::Code::ControllerWatchFailed,
                            controller = %name,
                            error = %crate::logging::words(&other),
                            "the controller's watch failed"
                        ),
                    }
                }
            }
        })
        .await;
        if !synced_at_end.load(std::sync::atomic::Ordering::Relaxed) {
            self.metrics.watching(-1);
        }
    }

    /// Edge handlers without a finalizer learn of deletions from the watch: a delete event, or a re-list
    /// that no longer holds an object handled before.
    async fn deleted(
        &self,
        event: &WatchEvent<K>,
        reader: &Store<K>,
        shared: &Arc<Shared>,
        namespace: Option<&str>,
    ) {
        let Handling::Edge(handler) = &self.handling else {
            return;
        };
        let gone: Vec<Arc<K>> = match event {
            WatchEvent::Delete(obj) => self
                .edge
                .forget(&key_of(obj))
                .map(|_| Arc::new(obj.clone()))
                .into_iter()
                .collect(),
            WatchEvent::InitDone => {
                let present: HashSet<String> =
                    reader.state().iter().map(|o| key_of(o.as_ref())).collect();
                // Another namespace's watch of the same controller keeps its own objects.
                let this_watch = |k: &String| match (k.split_once('/'), namespace) {
                    (Some((kns, _)), Some(ns)) => kns == ns,
                    _ => true,
                };
                self.edge
                    .vanished(&present)
                    .into_iter()
                    .filter(this_watch)
                    .filter_map(|k| self.edge.forget(&k))
                    .collect()
            }
            _ => return,
        };
        if self.options.finalizer {
            return;
        }
        for obj in gone {
            let cx = Context::new(shared.clone(), obj.namespace());
            let span = reconcile_span(&self.name, &key_of(obj.as_ref()));
            self.metrics.started();
            let began = Instant::now();
            let result = handler
                .call(Edge::Delete, None, &obj, &cx)
                .instrument(span.clone())
                .await;
            self.metrics.finished(began.elapsed(), result.is_ok());
            span.in_scope(|| match result {
                Ok(()) => tracing::info!(
                    outcome = "deleted",
                    duration_ms = millis(began),
                    "reconciled"
                ),
                Err(e) => tracing::warn!(
                    code = %piceli_core::codes::Code::HandlerFailed,
                    outcome = "error",
                    duration_ms = millis(began),
                    error = %e,
                    "on_delete failed"
                ),
            });
        }
    }
}

async fn reconcile<K: Watched>(obj: Arc<K>, run: Arc<Run<K>>) -> Result<Action, HandlerError>
where
    K::Scope: ScopeApi,
{
    let reg = &run.reg;
    let key = key_of(obj.as_ref());
    let span = reconcile_span(&reg.name, &key);
    let cx = Context::new(run.shared.clone(), obj.namespace());
    reg.metrics.dequeued(&key);
    reg.metrics.started();
    let began = Instant::now();
    let result = handle(reg, obj, cx, &key).instrument(span.clone()).await;
    reg.metrics.finished(began.elapsed(), result.is_ok());
    if result.is_ok() && reg.failures.succeeded(&key) {
        reg.metrics.retrying(-1);
    }
    // A failure is reported by the error policy, with the delay of its retry.
    if result.is_ok() {
        span.in_scope(|| tracing::info!(outcome = "ok", duration_ms = millis(began), "reconciled"));
    }
    result
}

/// The span of one reconcile (and of the edge handler calls for one object): the controller and the
/// object (`namespace/name`, or `name` for a cluster-scoped one).
fn reconcile_span(controller: &str, object: &str) -> tracing::Span {
    tracing::info_span!("reconcile", controller = %controller, object = %object)
}

/// Milliseconds since `began`, for log fields.
fn millis(began: Instant) -> u64 {
    u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The handler call for one object, with the finalizer when the declaration holds one.
async fn handle<K: Watched>(
    reg: &Registered<K>,
    obj: Arc<K>,
    cx: Context,
    key: &str,
) -> Result<Action, HandlerError>
where
    K::Scope: ScopeApi,
{
    let every = reg.options.every;
    let with_timer = |action: Action| match every {
        Some(e) if action == Action::await_change() => Action::requeue(e),
        _ => action,
    };
    match &reg.handling {
        Handling::Level(f) if !reg.options.finalizer => return f(obj, cx).await.map(with_timer),
        Handling::Edge(h) if !reg.options.finalizer => {
            return edge(reg, h.as_ref(), obj, false, &cx, key).await;
        }
        _ => {}
    }
    // Only a finalizer needs the object's API. Its futures (kube's finalizer helper with its patch
    // calls) are boxed: kube spawns a task per reconcile, sized by the largest path through it.
    let api: Api<K> = cx.api_for(obj.as_ref());
    match &reg.handling {
        Handling::Level(f) => {
            let f = f.clone();
            Box::pin(in_finalizer(&api, &reg.finalizer_name, obj, move |ev| {
                let f = f.clone();
                let cx = cx.clone();
                async move {
                    match ev {
                        Event::Apply(o) => f(o, cx).await,
                        Event::Cleanup(_) => Ok(Action::await_change()),
                    }
                }
            }))
            .await
            .map(with_timer)
        }
        Handling::Finalize(f) => {
            let f = f.clone();
            Box::pin(in_finalizer(&api, &reg.finalizer_name, obj, move |ev| {
                f(ev, cx)
            }))
            .await
            .map(with_timer)
        }
        Handling::Edge(h) => {
            let ours = obj.finalizers().contains(&reg.finalizer_name);
            let deleting = obj.meta().deletion_timestamp.is_some();
            if !ours && !deleting {
                // on_create runs before the finalizer is added: a crash in between repeats it.
                edge(reg, h.as_ref(), obj.clone(), false, &cx, key).await?;
            }
            let h = h.clone();
            Box::pin(in_finalizer(
                &api,
                &reg.finalizer_name,
                obj,
                move |ev| async move {
                    match ev {
                        Event::Apply(o) => edge(reg, h.as_ref(), o, true, &cx, key).await,
                        Event::Cleanup(o) => {
                            h.call(Edge::Delete, None, &o, &cx).await?;
                            reg.edge.forget(key);
                            Ok(Action::await_change())
                        }
                    }
                },
            ))
            .await
        }
    }
}

/// kube's finalizer helper, its errors as the handler's.
async fn in_finalizer<K, Fut>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    f: impl FnOnce(Event<K>) -> Fut,
) -> Result<Action, HandlerError>
where
    K: Watched,
    Fut: std::future::Future<Output = Result<Action, HandlerError>>,
{
    finalizer(api, name, obj, f).await.map_err(|e| match e {
        FinalizerError::ApplyFailed(e) | FinalizerError::CleanupFailed(e) => e,
        other => HandlerError(format!(
            "{}: {}",
            piceli_core::codes::Code::FinalizerFailed,
            crate::logging::words(&other)
        )),
    })
}

/// The due edge of `obj` (at `key`), handled; the next timer as the requeue.
async fn edge<K: Watched>(
    reg: &Registered<K>,
    handler: &dyn EdgeHandler<K>,
    obj: Arc<K>,
    known: bool,
    cx: &Context,
    key: &str,
) -> Result<Action, HandlerError> {
    let fired = match reg.edge.due(key, &obj, known) {
        Due::Create => {
            handler.call(Edge::Create, None, &obj, cx).await?;
            false
        }
        Due::Update(old) => {
            handler.call(Edge::Update, Some(&old), &obj, cx).await?;
            false
        }
        Due::Timer => {
            handler.call(Edge::Timer, None, &obj, cx).await?;
            true
        }
        Due::Nothing => false,
    };
    Ok(match reg.edge.handled(key, &obj, fired) {
        Some(d) => Action::requeue(d),
        None => Action::await_change(),
    })
}

fn error_policy<K: Watched>(obj: Arc<K>, error: &HandlerError, run: Arc<Run<K>>) -> Action {
    let key = key_of(obj.as_ref());
    let (delay, first) = run.reg.failures.failed(&key, error);
    if first {
        run.reg.metrics.retrying(1);
    }
    reconcile_span(&run.reg.name, &key).in_scope(|| {
        tracing::warn!(
            code = %piceli_core::codes::Code::HandlerFailed,
            outcome = "error",
            error = %error,
            retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            "reconcile failed"
        )
    });
    Action::requeue(delay)
}
