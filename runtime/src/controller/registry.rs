//! The set of controllers a binary runs ([`Controllers`]), registered by name and handler shape, and the
//! loop that runs them: all the time, or only while this process holds the leader Lease.

use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Client;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use tokio::time::Instant;

use super::backoff::Failures;
use super::context::{Context, ScopeApi};
use super::edge::EdgeState;
use super::error::ControllerError;
use super::handler::{self, Controller, Handling};
use super::leader::{Elector, LeaderElection};
use super::metrics::{ControllerMetrics, Metrics};
use super::options::ControllerOptions;
use super::rbac::{Access, Grant, lease, merge};
use super::run::{Registered, RunEnv, Stop, Watched};

/// A registered controller with its object type erased.
trait Entry: Send + Sync {
    fn start(&self, env: &RunEnv, stop: Stop) -> Vec<BoxFuture<'static, ()>>;
    fn grants(&self, operator_namespace: &str) -> Vec<Grant>;
}

impl<K: Watched> Entry for Arc<Registered<K>>
where
    K::Scope: ScopeApi,
{
    fn start(&self, env: &RunEnv, stop: Stop) -> Vec<BoxFuture<'static, ()>> {
        Registered::start(self, env, stop)
    }

    fn grants(&self, operator_namespace: &str) -> Vec<Grant> {
        Registered::grants(self, operator_namespace)
    }
}

/// How [`Controllers::run`] runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The operator's namespace: its Lease, and what `Namespaces::Operator` watches.
    pub operator_namespace: String,
    /// This process in the Lease and in Events (the pod name in a cluster).
    pub identity: String,
    /// Reconcile only while holding this Lease; `None` = always (one replica).
    pub leader: Option<LeaderElection>,
}

/// The controllers of one binary. Two controllers on one resource both run, each with its own watch,
/// finalizer and retry state.
pub struct Controllers {
    app: String,
    entries: Vec<Box<dyn Entry>>,
    names: Vec<String>,
    problems: Vec<String>,
    metrics: Vec<(String, Arc<ControllerMetrics>)>,
    frozen: OnceLock<Arc<Metrics>>,
}

impl Default for Controllers {
    fn default() -> Self {
        Controllers::new("piceli")
    }
}

impl Controllers {
    /// The controllers of the app `app` (its name qualifies the finalizers: `<app>.piceli.dev/<name>`).
    pub fn new(app: &str) -> Self {
        Controllers {
            app: app.to_string(),
            entries: Vec::new(),
            names: Vec::new(),
            problems: Vec::new(),
            metrics: Vec::new(),
            frozen: OnceLock::new(),
        }
    }

    /// The finalizer the controller `name` holds with `finalizer` and no name of its own
    /// ([`ControllerOptions::finalizer_named`]).
    pub fn finalizer_name(&self, name: &str) -> String {
        format!("{}.piceli.dev/{name}", self.app)
    }

    fn add<K: Watched>(
        mut self,
        name: &str,
        options: ControllerOptions,
        handling: Handling<K>,
    ) -> Self
    where
        K::Scope: ScopeApi,
    {
        if !piceli_core::rules::is_dns1123_label(name) {
            self.problems
                .push(format!("controller name {name:?} is not a DNS label"));
        }
        if let Some(problem) = options
            .finalizer_name
            .as_deref()
            .and_then(piceli_core::model::finalizer_name_problem)
        {
            self.problems
                .push(format!("controller {name:?}: finalizer name {problem}"));
        }
        if self.names.iter().any(|n| n == name) {
            self.problems
                .push(format!("two controllers are named {name:?}"));
        }
        if let Some(sel) = &options.labels
            && sel.split(',').any(|term| term.trim().is_empty())
        {
            self.problems.push(format!(
                "controller {name:?}: label selector {sel:?} does not parse"
            ));
        }
        let metrics = Arc::new(ControllerMetrics::default());
        let registered = Arc::new(Registered {
            name: name.to_string(),
            finalizer_name: options
                .finalizer_name
                .clone()
                .unwrap_or_else(|| self.finalizer_name(name)),
            edge: Arc::new(EdgeState::new(options.every)),
            failures: Arc::new(Failures::new(options.backoff.clone())),
            options,
            handling,
            metrics: metrics.clone(),
        });
        self.names.push(name.to_string());
        self.metrics.push((name.to_string(), metrics));
        self.entries.push(Box::new(registered));
        self
    }

    /// A level-based controller: `reconcile(obj, cx) -> Result<Action, E>` runs whenever `obj` changes,
    /// a retry is due, or its timer (`every`) is. To see deletions, use [`Controllers::finalize`].
    pub fn reconcile<K, F, Fut, E>(self, name: &str, options: ControllerOptions, f: F) -> Self
    where
        K: Watched,
        K::Scope: ScopeApi,
        F: Fn(Arc<K>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Display + 'static,
    {
        self.add(name, options, Handling::Level(handler::level(f)))
    }

    /// A level-based controller holding a finalizer: `f(Event::Apply(obj) | Event::Cleanup(obj), cx)`.
    /// The object is not deleted until `Cleanup` succeeds.
    pub fn finalize<K, F, Fut, E>(self, name: &str, options: ControllerOptions, f: F) -> Self
    where
        K: Watched,
        K::Scope: ScopeApi,
        F: Fn(Event<K>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Display + 'static,
    {
        let options = options.finalizer();
        self.add(name, options, Handling::Finalize(handler::finalize(f)))
    }

    /// An edge-style controller (a [`Controller`] implementation).
    pub fn edge<K, C>(self, name: &str, options: ControllerOptions, controller: C) -> Self
    where
        K: Watched,
        K::Scope: ScopeApi,
        C: Controller<K>,
    {
        self.add(name, options, Handling::Edge(Arc::new(controller)))
    }

    /// The registered names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether no controller is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The metrics of every controller (for `/metrics`, `/readyz`); fixed once first asked for.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.frozen
            .get_or_init(|| {
                Arc::new(Metrics {
                    controllers: self.metrics.clone(),
                    ..Metrics::default()
                })
            })
            .clone()
    }

    /// The RBAC rules the controllers need when the operator runs in `operator_namespace` (`leader`:
    /// with leader election, which needs its Lease).
    pub fn access(&self, operator_namespace: &str, leader: bool) -> Access {
        let mut grants: Vec<Grant> = self
            .entries
            .iter()
            .flat_map(|e| e.grants(operator_namespace))
            .collect();
        if leader {
            grants.push(lease(operator_namespace));
        }
        merge(grants)
    }

    /// Checks the registrations (names, selectors).
    pub fn validate(&self) -> Result<(), ControllerError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ControllerError::Invalid(self.problems.clone()))
        }
    }

    /// Runs every controller until `shutdown` resolves, then lets in-flight handlers finish and (with
    /// leader election) releases the Lease.
    pub async fn run(
        self,
        client: Client,
        options: RunOptions,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ControllerError> {
        self.validate()?;
        let metrics = self.metrics();
        let env = RunEnv {
            client: client.clone(),
            operator_namespace: options.operator_namespace.clone(),
            identity: options.identity.clone(),
        };
        let mut shutdown = std::pin::pin!(shutdown.fuse());
        // Each flag is set only after the watches it makes readiness wait for are counted (`start`), so a
        // health check in between never sees a leader with nothing to sync.
        let Some(election) = options.leader else {
            let (stop_tx, watches) = self.start(&env);
            metrics.leader.store(true, Relaxed);
            metrics.running.store(true, Relaxed);
            // MaybeDone: awaiting it again after it finished in the select is fine.
            let mut watches = std::pin::pin!(futures::future::maybe_done(watches));
            tokio::select! {
                _ = &mut shutdown => {}
                _ = &mut watches => {}
            }
            let _ = stop_tx.send(());
            watches.await;
            metrics.running.store(false, Relaxed);
            return Ok(());
        };
        // A standby is ready (it serves, but does not reconcile).
        metrics.running.store(true, Relaxed);
        let mut elector = Elector::new(
            client,
            &options.operator_namespace,
            election,
            &options.identity,
        );
        let retry = elector.config().retry_period;
        let renew_deadline = elector.config().renew_deadline;
        loop {
            // A candidate: try now, then every retry period.
            loop {
                match elector.try_acquire_or_renew().await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(
                        code = %piceli_core::codes::Code::LeaderElectionFailed,
                        identity = %options.identity,
                        error = %crate::logging::words(&e),
                        "leader election failed; trying again"
                    ),
                }
                tokio::select! {
                    _ = &mut shutdown => {
                        metrics.running.store(false, Relaxed);
                        return Ok(());
                    }
                    _ = tokio::time::sleep(retry) => {}
                }
            }
            tracing::info!(
                identity = %options.identity,
                controllers = self.entries.len(),
                "leading: the controllers run"
            );
            let (stop_tx, watches) = self.start(&env);
            metrics.leader.store(true, Relaxed);
            // MaybeDone: awaiting it again after it finished in the select is fine.
            let mut watches = std::pin::pin!(futures::future::maybe_done(watches));
            let mut renewed = Instant::now();
            let shutting_down = loop {
                tokio::select! {
                    _ = &mut shutdown => break true,
                    _ = &mut watches => break false,
                    _ = tokio::time::sleep(retry) => match elector.try_acquire_or_renew().await {
                        Ok(true) => renewed = Instant::now(),
                        Ok(false) => break false,
                        Err(e) => {
                            tracing::warn!(
                                code = %piceli_core::codes::Code::LeaderElectionFailed,
                                identity = %options.identity,
                                error = %crate::logging::words(&e),
                                "renewing the leader Lease failed"
                            );
                            if renewed.elapsed() >= renew_deadline {
                                break false;
                            }
                        }
                    },
                }
            };
            metrics.leader.store(false, Relaxed);
            if !shutting_down {
                tracing::warn!(identity = %options.identity, "stepping down as leader (the Lease was lost or not renewed in time): the controllers stop until it is won again");
            }
            let _ = stop_tx.send(());
            watches.await;
            if shutting_down {
                match elector.release().await {
                    Ok(()) => {
                        tracing::info!(identity = %options.identity, "released the leader Lease")
                    }
                    Err(e) => tracing::warn!(
                        code = %piceli_core::codes::Code::LeaderElectionFailed,
                        identity = %options.identity,
                        error = %crate::logging::words(&e),
                        "releasing the leader Lease failed"
                    ),
                }
                metrics.running.store(false, Relaxed);
                return Ok(());
            }
        }
    }

    /// Starts every watch of every controller for one term; the sender stops them gracefully.
    fn start(
        &self,
        env: &RunEnv,
    ) -> (
        futures::channel::oneshot::Sender<()>,
        impl Future<Output = ()> + use<>,
    ) {
        let (tx, rx) = futures::channel::oneshot::channel();
        let stop = rx.shared();
        let watches: Vec<_> = self
            .entries
            .iter()
            .flat_map(|e| e.start(env, stop.clone()))
            .map(tokio::spawn)
            .collect();
        (tx, futures::future::join_all(watches).map(|_| ()))
    }
}
