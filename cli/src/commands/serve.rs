//! `serve`: run the app's admission webhooks (HTTPS) and controllers (with leader election and
//! `/healthz`, `/readyz`, `/metrics`) until SIGTERM or Ctrl-C, finishing what is in flight. The cluster
//! is `--kubeconfig`/`--context` (or the target's) outside a pod, the in-cluster configuration inside
//! one. A port, certificate or Secret that cannot be used is refused (exit 2) before anything is served.
//! Logs go to stderr as text or JSON lines (`--log-format`), filtered by `RUST_LOG` (default `info`).

use crate::prelude::*;
use clap::Args;
use piceli_core::Code;
#[cfg(feature = "operator")]
use {
    crate::session::block_on_with_workers,
    piceli_core::model::App,
    piceli_runtime::controller::Controllers,
    piceli_runtime::engine::target::{ConnectOptions, connect_to, resolve},
    piceli_runtime::logging::{self, LogFormat},
    piceli_runtime::serve::{self, ServeConfig, ServeFailure},
    piceli_runtime::webhook::Webhooks,
};

/// The arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (default 0.0.0.0:8443).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The PEM certificate chain (default /etc/piceli/tls/tls.crt, the mounted TLS Secret); reloaded
    /// when it changes.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key (default /etc/piceli/tls/tls.key).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Read the serving certificate from this `kubernetes.io/tls` Secret (`NAMESPACE/NAME`) instead of
    /// files, and reload it when the Secret changes.
    #[arg(long, value_name = "NS/NAME", conflicts_with_all = ["tls_cert", "tls_key"])]
    pub tls_from_secret: Option<String>,
    /// Where the controllers answer /healthz, /readyz and /metrics when the app also has webhooks
    /// (without webhooks they answer on --listen, default 0.0.0.0:8080).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub health_listen: std::net::SocketAddr,
    /// Threads that run requests and reconcilers. One answers tens of thousands of admission requests
    /// a second with the tightest latency (docs/benchmarks.md); raise it for handlers or reconcilers
    /// that compute for long, or scale out with the operator's replicas.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
    /// How log lines are written on stderr: `text` (one human line per event) or `json` (one JSON object
    /// per line, for a log collector). `RUST_LOG` filters them (default `info`: a line per reconcile
    /// outcome, webhook failures, leader election).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormatArg::Text)]
    pub log_format: LogFormatArg,
}

/// The values of `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    /// One human line per event.
    Text,
    /// One JSON object per line.
    Json,
}

#[cfg(feature = "operator")]
impl From<LogFormatArg> for LogFormat {
    fn from(f: LogFormatArg) -> LogFormat {
        match f {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

impl Command for ServeArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "watches and writes (runs the app's controllers, which watch and write what they declare; serves its admission webhooks, which the cluster calls)",
        requires_approval: false,
    };

    #[cfg(feature = "operator")]
    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(
            &invocation.app,
            (invocation.operator.webhooks)(),
            invocation.operator.controllers,
            &invocation.global,
            self,
        )
    }

    /// Without the `operator` feature an app declares no webhooks or controllers (PCL0240 at compile time).
    #[cfg(not(feature = "operator"))]
    fn run(&self, _invocation: Invocation) -> Result<(), Failure> {
        Err(nothing_to_serve())
    }
}

/// `serve` of an app without webhooks or controllers.
fn nothing_to_serve() -> Failure {
    Failure::new(
        Code::ServeFailed,
        "this app declares no webhooks or controllers to serve".into(),
        "declare `validate`/`mutate` or `controller` items and an `operator` in `app!` (see docs/webhooks.md, docs/controllers.md)"
            .into(),
    )
}

/// Run `serve` with the app's webhooks and controllers.
#[cfg(feature = "operator")]
pub fn run(
    app: &App,
    webhooks: Webhooks,
    controllers: fn() -> Controllers,
    global: &Global,
    args: &ServeArgs,
) -> Result<(), Failure> {
    // Kept to the end: dropping it flushes the spans still buffered for export (`otlp`).
    let _logs = logging::init(args.log_format.into(), "info")?;
    let controllers = (!app.controllers.is_empty()).then(controllers);
    if webhooks.paths().is_empty() && controllers.is_none() {
        return Err(nothing_to_serve());
    }
    let tls_secret = match &args.tls_from_secret {
        None => None,
        Some(text) => match text.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() => {
                Some((ns.to_string(), name.to_string()))
            }
            _ => {
                return Err(Failure::new(
                    Code::TlsSecretFailed,
                    format!("--tls-from-secret {text:?} is not NAMESPACE/NAME"),
                    "write e.g. `--tls-from-secret guard-system/guard-tls`".into(),
                ));
            }
        },
    };
    let tls_files = match (&args.tls_cert, &args.tls_key) {
        (None, None) => None,
        (cert, key) => {
            let defaults = piceli_runtime::webhook::ServeOptions::default();
            Some((
                cert.clone().unwrap_or(defaults.tls_cert.clone()),
                key.clone().unwrap_or(defaults.tls_key),
            ))
        }
    };
    // `tls: self_managed` unless the command line names the pair.
    let self_managed = app.operator.as_ref().filter(|o| {
        o.tls == piceli_core::model::OperatorTls::SelfManaged
            && tls_files.is_none()
            && tls_secret.is_none()
            && !webhooks.paths().is_empty()
    });
    let self_managed = self_managed.map(|o| o.name.v.clone());
    let needs_cluster = controllers.is_some() || tls_secret.is_some() || self_managed.is_some();
    let app = app.clone();
    let global_namespace = global.namespace.clone();
    let connect = ConnectOptions {
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
    };
    let target = global.target.clone();
    block_on_with_workers(usize::from(args.workers), async move {
        let (client, target_namespace) = if needs_cluster {
            let (client, ns) = cluster(&app, target.as_deref(), &connect).await?;
            (Some(client), ns)
        } else {
            (None, None)
        };
        let namespace = std::env::var("POD_NAMESPACE")
            .ok()
            .filter(|n| !n.is_empty())
            .or(global_namespace)
            .or(target_namespace)
            .unwrap_or_else(|| "default".into());
        let config = ServeConfig {
            listen: args.listen,
            health_listen: args.health_listen,
            tls_files,
            tls_secret,
            self_managed: self_managed
                .map(|name| serve::self_managed::SelfManaged::for_operator(&name, &namespace)),
            client,
            namespace,
            identity: serve::identity(),
        };
        serve::run(&app, webhooks, controllers, config)
            .await
            .map_err(Failure::from)
    })?
}

/// The client: `--kubeconfig` (or the target's kubeconfig outside a pod), else the in-cluster config.
#[cfg(feature = "operator")]
async fn cluster(
    app: &App,
    target: Option<&str>,
    connect: &ConnectOptions,
) -> Result<(piceli_runtime::kube::Client, Option<String>), Failure> {
    let target = match target {
        Some(name) => app.targets.iter().find(|t| t.name.v == name),
        None => app.targets.first(),
    };
    let target_namespace = target.map(|t| t.namespace.v.clone());
    let in_pod = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
    if connect.kubeconfig.is_none() && in_pod {
        let config = piceli_runtime::kube::Config::incluster()
            .map_err(|e| unreachable_cluster(e.to_string()))?;
        let client = piceli_runtime::kube::Client::try_from(config)
            .map_err(|e| unreachable_cluster(e.to_string()))?;
        return Ok((client, target_namespace));
    }
    let (path, context) = match (target, &connect.kubeconfig) {
        (Some(t), _) => resolve(t, connect),
        (None, Some(path)) => (path.clone(), connect.context.clone().unwrap_or_default()),
        (None, None) => {
            return Err(unreachable_cluster(
                "the app declares no target and no --kubeconfig was given".into(),
            ));
        }
    };
    // The engine's own error (kubeconfig, TLS, unreachable, unauthorized), with its code and cause.
    let connection = connect_to(&path, &context).await.map_err(Failure::from)?;
    Ok((connection.client, target_namespace))
}

#[cfg(feature = "operator")]
fn unreachable_cluster(message: String) -> Failure {
    Failure::from(ServeFailure::Cluster(message))
}
