//! Connecting to a target's cluster: only the kubeconfig file and context the target (or the command
//! line) names — never `~/.kube/config`, never `KUBECONFIG`, never the current context implicitly.

use super::error::EngineError;
use kube::config::{KubeConfigOptions, Kubeconfig};
use piceli_core::model::{Cluster, Target};
use std::path::{Path, PathBuf};

/// Where the local cluster (`piceli sim start --dir .piceli/local`) writes its kubeconfig.
pub const LOCAL_KUBECONFIG: &str = ".piceli/local/kubeconfig";
/// The context the local cluster's kubeconfig defines.
pub const LOCAL_CONTEXT: &str = "piceli-sim";

/// Command-line overrides of the target's cluster.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// `--kubeconfig PATH`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context NAME`.
    pub context: Option<String>,
}

/// A client for the target's cluster and what identifies it.
#[derive(Clone)]
pub struct Connection {
    /// The client.
    pub client: kube::Client,
    /// The API server URL.
    pub server: String,
    /// The kubeconfig context used.
    pub context: String,
    /// How the cluster serves each kind: discovered once per session, shared by plan, apply and waits.
    pub resources: std::sync::Arc<super::resources::Resources>,
}

/// The kubeconfig file and context a target uses, overrides applied.
pub fn resolve(target: &Target, opts: &ConnectOptions) -> (PathBuf, String) {
    let (path, context) = match &target.cluster {
        Cluster::Kubeconfig { path, context } => (PathBuf::from(&path.v), context.v.clone()),
        Cluster::Local => (PathBuf::from(LOCAL_KUBECONFIG), LOCAL_CONTEXT.to_string()),
    };
    (
        opts.kubeconfig.clone().unwrap_or(path),
        opts.context.clone().unwrap_or(context),
    )
}

/// Connect to the target's cluster.
pub async fn connect(target: &Target, opts: &ConnectOptions) -> Result<Connection, EngineError> {
    let (path, context) = resolve(target, opts);
    connect_to(&path, &context).await
}

/// Connect with an explicit kubeconfig file and context.
pub async fn connect_to(path: &Path, context: &str) -> Result<Connection, EngineError> {
    let shown = path.display().to_string();
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| EngineError::Kubeconfig {
        path: shown.clone(),
        reason: e.to_string(),
        source: Box::new(e),
    })?;
    if !kubeconfig.contexts.iter().any(|c| c.name == context) {
        return Err(EngineError::Context {
            path: shown,
            context: context.to_string(),
        });
    }
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        cluster: None,
        user: None,
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| EngineError::Kubeconfig {
            path: shown.clone(),
            reason: e.to_string(),
            source: Box::new(e),
        })?;
    let server = config.cluster_url.to_string();
    let client =
        kube::Client::try_from(config).map_err(|e| EngineError::cluster("building a client", e))?;
    Ok(Connection {
        client,
        server,
        context: context.to_string(),
        resources: Default::default(),
    })
}
