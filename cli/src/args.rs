//! The app binary's arguments: global options and one subcommand each (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The longest `--timeout` accepted: one day, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// The app's own deploy binary.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "This app's deploy binary (Piceli): render its Kubernetes objects, and more."
)]
pub struct AppCli {
    /// Options every subcommand takes.
    #[command(flatten)]
    pub global: Global,
    /// What to do (without one, print help and exit 0, as cargo does).
    #[command(subcommand)]
    pub command: Option<AppCommand>,
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// The target to use (default: the first the app declares).
    #[arg(long, global = true, value_name = "NAME")]
    pub target: Option<String>,
    /// Put namespaced objects in this namespace instead of the target's.
    #[arg(long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Output format: `text` (human text; YAML for render) or `json` (one JSON document on stdout).
    #[arg(long, short = 'o', global = true, value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// Kubeconfig file, overriding the target's (never ~/.kube/config or KUBECONFIG). Unused by render.
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context, overriding the target's. Unused by render.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Where plans and the journal live (default `.piceli/<app>/<target>/`). Unused by render.
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Seconds `apply`, `resume` and `deploy` wait for workloads to be ready (0: do not wait; at most
    /// 86400, one day).
    #[arg(
        long,
        global = true,
        value_name = "SECONDS",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT_SECS)
    )]
    pub timeout: u64,
    /// When another apply holds the target's cluster lock, wait for it (up to `--timeout` seconds)
    /// instead of refusing at once.
    #[arg(long, global = true)]
    pub wait_lock: bool,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Human text (render: multi-document YAML).
    Text,
    /// YAML (render only; the same as `text`).
    Yaml,
    /// JSON on stdout.
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// Print the app's Kubernetes objects (never reads a kubeconfig or contacts a cluster).
    Render(RenderArgs),
    /// Show what applying would change, field by field, and store the plan under its hash (reads and dry
    /// runs only). Exit 3 when there are changes to approve, 0 when there are none.
    Plan(PlanArgs),
    /// Execute exactly the stored plan with this hash (refused, exit 2, when the hash is unknown or the
    /// cluster changed since the plan).
    Apply(ApplyArgs),
    /// Finish the release an interrupted apply left running (nothing to do: exit 0), after verifying its
    /// stored plan against the approved hash; repairs a missing release record. `--abandon` ends it instead.
    Resume(ResumeArgs),
    /// Run the declared checks (http, exec, metric, code) against the live release now. Exit 0 when all
    /// pass, 1 when any fails.
    Check,
    /// Plan, then (with `--approve HASH`) apply, wait for readiness, run the checks, and roll back when
    /// the target says so. Without `--approve`: print the hash, exit 3. No changes: no approval needed,
    /// the checks run. `-o json` streams one JSON object per stage (JSON lines).
    Deploy(DeployArgs),
    /// Ask a running apply against this target to halt between steps (`resume` continues it).
    Stop,
    /// Plan a return to an earlier release (default: the one before the live release); approve it with
    /// `apply --approve HASH` like any change. Exit 3 when it has changes.
    Rollback(RollbackArgs),
    /// The releases in the journal, newest first, with their state.
    History,
    /// Field-level differences: `diff A B` between two releases, `diff N` (or `diff`, the live release)
    /// between a release and the live cluster (drift). Exit 0 when none, 1 when some.
    Diff(DiffArgs),
    /// Is the app up, and which URLs reach it: each workload's health, the live release, the last checks.
    /// Exit 0 when `up`, 1 when `degraded`, `down` or `unknown`.
    Status,
    /// Serve the app's declared port forwards on 127.0.0.1 until Ctrl-C (reads only; exit 2 when a local
    /// port is taken).
    Access(AccessArgs),
    /// Serve the app's admission webhooks over HTTPS (HTTP/1.1 and HTTP/2) until SIGTERM, with /healthz,
    /// /readyz and /metrics: what the operator's Deployment runs. Exit 2 when it cannot start.
    Serve(ServeArgs),
    /// Explain a fixed error code (PCL…).
    Explain(ExplainArgs),
    /// The whole command tree, with side effects and approval rules, as JSON.
    #[command(name = "help-json")]
    HelpJson,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print this binary's man page (roff) to stdout.
    Man,
}

/// `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (default 0.0.0.0:8443).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The PEM certificate chain (default /etc/piceli/tls/tls.crt, the mounted TLS Secret); reloaded
    /// when it changes.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key (default /etc/piceli/tls/tls.key).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
}

/// `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Print the Containerfile that builds this app's binary and runs `serve` (instead of the objects).
    #[arg(long)]
    pub containerfile: bool,
}

/// `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Take over an existing object that is not the app's (repeatable), e.g. `--adopt Deployment/web`.
    #[arg(long, value_name = "KIND/NAME")]
    pub adopt: Vec<String>,
    /// Take over every existing object the app declares.
    #[arg(long)]
    pub adopt_all: bool,
    /// Take over fields another field manager owns (`kubectl scale`, `kubectl set image`): alone, every
    /// conflicting field; with FIELD (repeatable), that one (`.spec.replicas`, or `Deployment/web:.spec.replicas`).
    #[arg(long, value_name = "FIELD", num_args = 0..=1, default_missing_value = "*", action = clap::ArgAction::Append)]
    pub take_ownership: Vec<String>,
    /// Leave the unchanged objects out of the text (they are still counted, and in `-o json`).
    #[arg(long)]
    pub changes_only: bool,
}

/// `apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The hash `plan` printed (or a unique prefix of at least 12 hex digits).
    #[arg(long, value_name = "HASH")]
    pub approve: String,
}

/// `resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// End the running release as `superseded` instead of finishing it (journaled; nothing is written to
    /// the cluster), e.g. when its secret sources changed and it can no longer be finished as approved.
    #[arg(long)]
    pub abandon: bool,
}

/// `deploy`.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The hash a `deploy` without it printed (needed only when the plan has changes).
    #[arg(long, value_name = "HASH", conflicts_with = "resume")]
    pub approve: Option<String>,
    /// Continue the interrupted deploy run from the stage it reached (nothing to do: exit 0).
    #[arg(long)]
    pub resume: bool,
    /// Deliver images built from the workspace to this registry instead of the target's, for this run.
    #[arg(long, value_name = "HOST[:PORT]/PATH")]
    pub registry: Option<String>,
    /// The docker config file holding the registry's credentials (never ~/.docker/config.json).
    #[arg(long, value_name = "FILE")]
    pub registry_auth: Option<PathBuf>,
    /// Write built images into this OCI layout directory instead of pushing them.
    #[arg(long, value_name = "DIR", conflicts_with = "registry")]
    pub oci_dir: Option<PathBuf>,
    /// The cargo workspace that builds the images (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// `rollback`.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The release number to return to, or `previous` (the default).
    #[arg(default_value = "previous")]
    pub release: String,
}

/// `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A release number (default: the live release).
    pub from: Option<u64>,
    /// Another release number, or `live` (the default).
    #[arg(default_value = "live")]
    pub to: String,
}

/// `access`.
#[derive(Debug, Args)]
pub struct AccessArgs {
    /// Serve only this forward (a Service name; repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Listen on another local port for a forward (repeatable), e.g. `--port web=18081`; 0 picks a free one.
    #[arg(long, value_name = "NAME=LOCAL")]
    pub port: Vec<String>,
}

/// `explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code, e.g. PCL0016 (omit to list every code).
    pub code: Option<String>,
}
