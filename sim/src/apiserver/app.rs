//! The shared state of one simulator process: store, registry of served types, token, and the
//! background tasks (polling for other processes' writes, keeping CRD-defined types current). The
//! controllers, the kubelet and cert-manager see it only through the narrow handle it makes
//! ([`App::cluster`]) and, for the controllers' loop, the [`Host`] it implements.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::cluster::informer::Informers;
use crate::controllers::{ControllerStats, Host, Turns};
use crate::error::SimError;
use crate::hooks::Hooks;
use crate::registry::backend::{Backend, CRD_KEY};
use crate::status::ApiError;
use crate::storage::Store;

/// State shared by every request.
pub struct App {
    /// The store, served types and admission the registry's write and delete pipeline works on.
    pub backend: Backend,
    /// Sim-only hooks: pod ports mapped to real local addresses, exec handlers, container logs
    /// (shared with the admission webhooks, which dial a Service's pods through them).
    pub hooks: Arc<Hooks>,
    /// The bearer token clients authenticate with.
    pub token: String,
    /// The cluster CA (PEM), published in every namespace's `kube-root-ca.crt`.
    pub ca_pem: String,
    /// The address the server listens on (`127.0.0.1:PORT`), advertised in discovery.
    pub addr: String,
    /// Whether requests are authorized by RBAC (`--no-rbac` turns it off); the admin token is
    /// always allowed.
    pub rbac: bool,
    /// Whether the built-in cert-manager runs (`--cert-manager`).
    pub cert_manager: bool,
    /// How often a watch that asked for bookmarks gets one (`--bookmark-interval-ms`).
    pub bookmark_interval: Duration,
    /// The RBAC objects as last read, for authorization.
    pub(crate) rbac_policy: crate::apiserver::rbac::PolicyCache,
    /// ServiceAccount tokens already verified.
    pub(crate) token_cache: crate::apiserver::tokens::TokenCache,
    /// Which binding allowed each request, when a test asked for it.
    pub rbac_usage: crate::apiserver::rbac_usage::RbacUsage,
    /// The controllers' parsed lists, read again per change of their kind.
    pub(crate) informers: Informers,
    /// How many controller turns ran and were skipped.
    pub(crate) turns: Turns,
    /// The OpenAPI v2 document, built once per change of the served types.
    pub(crate) openapi_v2: crate::apiserver::openapi_v2::V2Cache,
}

impl App {
    /// Opens the store and loads the CRD-defined types.
    pub fn new(
        dir: Option<&Path>,
        token: String,
        ca_pem: String,
        addr: String,
    ) -> Result<App, SimError> {
        let hooks = Arc::new(Hooks::default());
        let webhooks = crate::admission::Webhooks::new(hooks.clone());
        let app = App {
            backend: Backend::new(Store::open(dir)?, Box::new(webhooks)),
            hooks,
            token,
            ca_pem,
            addr,
            rbac: true,
            cert_manager: false,
            bookmark_interval: crate::apiserver::handlers::DEFAULT_BOOKMARK_INTERVAL,
            rbac_policy: Default::default(),
            token_cache: Default::default(),
            rbac_usage: Default::default(),
            informers: Default::default(),
            turns: Default::default(),
            openapi_v2: Default::default(),
        };
        app.backend
            .reload_crds()
            .map_err(|e| SimError::Corrupt(e.message))?;
        app.bootstrap().map_err(|e| SimError::Corrupt(e.message))?;
        Ok(app)
    }

    /// Creates the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease)
    /// and the `kubernetes` Service the apiserver keeps in `default`.
    fn bootstrap(&self) -> Result<(), ApiError> {
        let Some(rt) = self.backend.registry.lookup("", "v1", "namespaces") else {
            return Ok(());
        };
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            if self.backend.store.get(&rt.store_key(), "", name)?.is_some() {
                continue;
            }
            let ctx = crate::registry::object::WriteCtx {
                backend: &self.backend,
                rt: &rt,
                ns: "",
                subresource: "",
                manager: "piceli-sim".into(),
                dry_run: false,
                validation: crate::registry::validate::FieldValidation::Strict,
                authorize_create: None,
            };
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            match crate::registry::object::write(
                &ctx,
                name,
                crate::registry::object::Mode::Create,
                |_| Ok(crate::registry::object::Candidate::Replace(body)),
            ) {
                Ok(_) => {}
                Err(e) if e.code == 409 => {}
                Err(e) => return Err(e),
            }
        }
        crate::apiserver::policy::bootstrap(self)?;
        crate::controllers::cluster_defaults::kubernetes_service(&self.cluster())
    }

    /// The narrow handle the controllers, the kubelet and cert-manager see this cluster through.
    pub(crate) fn cluster(&self) -> Cluster<'_> {
        Cluster::new(&self.backend, &self.informers, &self.hooks, &self.ca_pem)
    }

    /// The controllers' counters so far.
    pub(crate) fn controller_stats(&self) -> ControllerStats {
        self.turns.stats(&self.informers)
    }

    /// How many turns each controller ran, by name.
    pub(crate) fn controller_runs(&self) -> std::collections::BTreeMap<&'static str, u64> {
        self.turns.runs()
    }

    /// Starts the background tasks on the current runtime.
    pub fn start_background(self: &Arc<Self>) {
        let app = self.clone();
        let mut rx = self.backend.store.hub().subscribe();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(e) if e.rk == CRD_KEY => {
                        let _ = app.backend.reload_crds();
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let _ = app.backend.reload_crds();
                    }
                    Err(_) => break,
                }
            }
        });
        if self.backend.store.file_backed() {
            let app = self.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(200));
                loop {
                    tick.tick().await;
                    let a = app.clone();
                    let _ =
                        tokio::task::spawn_blocking(move || a.backend.store.poll_foreign()).await;
                }
            });
        }
    }
}

impl Host for App {
    fn cluster(&self) -> Cluster<'_> {
        App::cluster(self)
    }

    fn store(&self) -> &Store {
        &self.backend.store
    }

    fn informers(&self) -> &Informers {
        &self.informers
    }

    fn turns(&self) -> &Turns {
        &self.turns
    }

    fn cert_manager(&self) -> bool {
        self.cert_manager
    }
}
