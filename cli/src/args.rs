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
    /// A dotenv file (`KEY=VALUE` lines) that `from_env` secret sources read before the process
    /// environment; repeatable, a later file wins. Unused by render.
    #[arg(long, global = true, value_name = "FILE")]
    pub env_file: Vec<PathBuf>,
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
    Render(crate::commands::render::RenderArgs),
    /// Show what applying would change, field by field, and store the plan under its hash (reads and dry
    /// runs only). Exit 3 when there are changes to approve, 0 when there are none.
    Plan(crate::commands::plan::PlanArgs),
    /// Execute exactly the stored plan with this hash (refused, exit 2, when the hash is unknown or the
    /// cluster changed since the plan).
    Apply(crate::commands::apply::ApplyArgs),
    /// Finish the release an interrupted apply left running (nothing to do: exit 0), after verifying its
    /// stored plan against the approved hash; repairs a missing release record. `--abandon` ends it instead.
    Resume(crate::commands::resume::ResumeArgs),
    /// Run the declared checks (http, exec, metric, code) against the live release now. Exit 0 when all
    /// pass, 1 when any fails.
    Check,
    /// Plan, then (with `--approve HASH`) apply, wait for readiness, run the checks, and roll back when
    /// the target says so. Without `--approve`: print the hash, exit 3. No changes: no approval needed,
    /// the checks run. `-o json` streams one JSON object per stage (JSON lines).
    Deploy(crate::commands::deploy::DeployArgs),
    /// Ask a running apply against this target to halt between steps (`resume` continues it).
    Stop,
    /// Plan a return to an earlier release (default: the one before the live release); approve it with
    /// `apply --approve HASH` like any change. Exit 3 when it has changes.
    Rollback(crate::commands::rollback::RollbackArgs),
    /// The releases in the journal, newest first, with their state.
    History,
    /// Field-level differences: `diff A B` between two releases, `diff N` (or `diff`, the live release)
    /// between a release and the live cluster (drift). Exit 0 when none, 1 when some.
    Diff(crate::commands::diff::DiffArgs),
    /// Is the app up, and which URLs reach it: each workload's health, the live release, the last checks.
    /// Exit 0 when `up`, 1 when `degraded`, `down` or `unknown`.
    Status,
    /// Serve the app's declared port forwards on 127.0.0.1 until Ctrl-C (reads only; exit 2 when a local
    /// port is taken).
    Access(crate::commands::access::AccessArgs),
    /// Serve the app's admission webhooks over HTTPS (HTTP/1.1 and HTTP/2) until SIGTERM, with /healthz,
    /// /readyz and /metrics: what the operator's Deployment runs. Exit 2 when it cannot start.
    Serve(crate::commands::serve::ServeArgs),
    /// Explain a fixed error code (PCL…).
    Explain(crate::commands::explain::ExplainArgs),
    /// The whole command tree, with side effects and approval rules, as JSON.
    #[command(name = "help-json")]
    HelpJson,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(crate::commands::shell::CompletionsArgs),
    /// Print this binary's man page (roff) to stdout.
    Man,
}
