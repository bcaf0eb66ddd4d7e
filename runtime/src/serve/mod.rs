//! `serve`: the app's webhooks (HTTPS) and controllers side by side in one process until SIGTERM. The
//! controllers run under Lease leader election (identity: the pod's name), with `/healthz`, `/readyz`
//! and `/metrics` over plain HTTP; the webhooks keep serving on every replica. The serving certificate
//! comes from files or, with `--tls-from-secret NS/NAME`, from a Secret that is re-read when it changes.

mod secret;
pub mod self_managed;

use std::net::SocketAddr;
use std::path::PathBuf;

use piceli_core::model::App;
use piceli_core::{Code, Coded};

use crate::controller::{Controllers, HealthServer, LeaderElection, RunOptions, declared_access};
use crate::webhook::{self, ServeError, ServeOptions, Webhooks};

pub use secret::SecretTls;

/// Why `serve` stopped or could not start, with its code and a fix.
#[derive(Debug, thiserror::Error)]
pub enum ServeFailure {
    /// The webhook server or the health listener cannot start.
    #[error("{0}")]
    Server(#[from] ServeError),
    /// No cluster to run the controllers against (PCL0176).
    #[error("no cluster for the controllers: {0}")]
    Cluster(String),
    /// The TLS Secret cannot be read (PCL0177).
    #[error("TLS Secret {secret}: {reason}")]
    Secret {
        /// `NS/NAME`.
        secret: String,
        /// What went wrong.
        reason: String,
    },
    /// The controllers cannot run (PCL0170, PCL0175).
    #[error("{message}")]
    Controllers {
        /// The code.
        code: Code,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: String,
    },
}

impl Coded for ServeFailure {
    fn code(&self) -> Code {
        match self {
            ServeFailure::Server(_) => Code::ServeFailed,
            ServeFailure::Cluster(_) => Code::ClusterConfigFailed,
            ServeFailure::Secret { .. } => Code::TlsSecretFailed,
            ServeFailure::Controllers { code, .. } => *code,
        }
    }

    fn help(&self) -> String {
        match self {
            ServeFailure::Server(e) => e.help(),
            ServeFailure::Cluster(_) => "pass --kubeconfig (and --context), or run `serve` in the operator's pod (in-cluster config)".into(),
            ServeFailure::Secret { .. } => "check that the Secret exists (cert-manager writes it once its Certificate is issued) and has tls.crt and tls.key, and that the credentials may get and watch it".into(),
            ServeFailure::Controllers { help, .. } => help.clone(),
        }
    }
}

/// What `serve` runs and where.
pub struct ServeConfig {
    /// The webhooks' HTTPS address, or the health address when the app has no webhooks.
    pub listen: Option<SocketAddr>,
    /// The health and metrics address of the controllers when the app also has webhooks.
    pub health_listen: SocketAddr,
    /// The certificate and key files (when not from a Secret).
    pub tls_files: Option<(PathBuf, PathBuf)>,
    /// `--tls-from-secret NS/NAME`.
    pub tls_secret: Option<(String, String)>,
    /// `tls: self_managed`: the leader keeps the certificate; every replica serves the Secret's pair.
    pub self_managed: Option<self_managed::SelfManaged>,
    /// The client, needed by controllers and `--tls-from-secret`.
    pub client: Option<kube::Client>,
    /// The operator's namespace (its Lease, and what controllers watch by default).
    pub namespace: String,
    /// This process in the Lease.
    pub identity: String,
}

/// How often the self-managed certificate's leader checks it (and takes the Lease over from a leader
/// that is gone).
const SELF_MANAGED_CHECK: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a replica waits for the self-managed Secret before it gives up (PCL0177).
const SELF_MANAGED_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The identity of this process in the leader Lease: `POD_NAME` (the rendered Deployment sets it from
/// the downward API), else the host name and the process id.
pub fn identity() -> String {
    if let Ok(name) = std::env::var("POD_NAME")
        && !name.is_empty()
    {
        return name;
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "piceli".into());
    format!("{host}-{}", std::process::id())
}

/// Runs the webhooks and controllers until `shutdown` resolves, then finishes what is in flight and
/// releases the Lease.
pub async fn run(
    app: &App,
    webhooks: Webhooks,
    controllers: Option<Controllers>,
    config: ServeConfig,
) -> Result<(), ServeFailure> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let mut tasks = tokio::task::JoinSet::new();
    let mut tls_files = config.tls_files.clone();
    let mut tls_secret = config.tls_secret.clone();
    if let Some(spec) = config.self_managed.clone() {
        let client = config
            .client
            .clone()
            .ok_or_else(|| ServeFailure::Cluster("`tls: self_managed` needs a cluster".into()))?;
        tls_secret = Some((spec.namespace.clone(), spec.secret.clone()));
        let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(client.clone(), &spec.namespace);
        let name = spec.secret.clone();
        let done = stopped();
        let identity = config.identity.clone();
        tasks.spawn(async move {
            self_managed::maintain(client, spec, identity, SELF_MANAGED_CHECK, done).await;
            Ok(())
        });
        // Every replica waits for the leader's Secret (its first turn makes it within seconds).
        let mut waited = std::time::Duration::ZERO;
        while secrets.get_opt(&name).await.ok().flatten().is_none() {
            if waited >= SELF_MANAGED_WAIT {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            waited += std::time::Duration::from_millis(500);
        }
    }
    if let Some((ns, name)) = &tls_secret {
        let client = config
            .client
            .clone()
            .ok_or_else(|| ServeFailure::Cluster("--tls-from-secret needs a cluster".into()))?;
        let tls = SecretTls::start(client, ns, name).await?;
        tls_files = Some(tls.files());
        let done = stopped();
        tasks.spawn(async move {
            tls.follow(done).await;
            Ok(())
        });
    }
    let hooks = !webhooks.paths().is_empty();
    if hooks {
        let defaults = ServeOptions::default();
        let (cert, key) =
            tls_files.unwrap_or((defaults.tls_cert.clone(), defaults.tls_key.clone()));
        let options = ServeOptions {
            listen: config.listen.unwrap_or(defaults.listen),
            tls_cert: cert,
            tls_key: key,
            ..defaults
        };
        let server = webhook::Server::bind(webhooks, options).await?;
        tracing::info!(address = %server.local_addr(), "serving webhooks over HTTPS");
        let done = stopped();
        tasks.spawn(async move { server.run(done).await.map_err(ServeFailure::from) });
    }
    if let Some(controllers) = controllers {
        controllers
            .validate()
            .map_err(|e| ServeFailure::Controllers {
                code: e.code(),
                help: e.help(),
                message: e.to_string(),
            })?;
        declared_access(app, &config.namespace, true).map_err(|e| ServeFailure::Controllers {
            code: e.code(),
            help: e.help(),
            message: e.to_string(),
        })?;
        let client = config
            .client
            .clone()
            .ok_or_else(|| ServeFailure::Cluster("the controllers need a cluster".into()))?;
        let addr = match (hooks, config.listen) {
            (false, Some(addr)) => addr,
            _ => config.health_listen,
        };
        let health = HealthServer::bind(addr, controllers.metrics()).await?;
        if let Some(addr) = health.local_addr() {
            tracing::info!(address = %addr, "serving health and metrics over HTTP");
        }
        let done = stopped();
        tasks.spawn(async move {
            health.run(done).await;
            Ok(())
        });
        let options = RunOptions {
            operator_namespace: config.namespace.clone(),
            identity: config.identity.clone(),
            leader: Some(LeaderElection::new(format!("{}-controllers", app.name.v))),
        };
        tracing::info!(
            controllers = controllers.names().len(),
            namespace = %config.namespace,
            identity = %config.identity,
            "running the controllers under leader election"
        );
        let done = stopped();
        tasks.spawn(async move {
            controllers
                .run(client, options, done)
                .await
                .map_err(|e| ServeFailure::Controllers {
                    code: e.code(),
                    help: e.help(),
                    message: e.to_string(),
                })
        });
    }
    tokio::select! {
        _ = webhook::shutdown_signal() => tracing::info!("shutting down: finishing what is in flight"),
        Some(early) = tasks.join_next() => {
            // A part stopped on its own: stop the rest and report it.
            let _ = stop_tx.send(true);
            while tasks.join_next().await.is_some() {}
            return early.unwrap_or(Ok(()));
        }
    }
    let _ = stop_tx.send(true);
    let mut result = Ok(());
    while let Some(done) = tasks.join_next().await {
        if let Ok(Err(e)) = done
            && result.is_ok()
        {
            result = Err(e);
        }
    }
    result
}
