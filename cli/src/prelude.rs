//! What every command file uses: the global options every subcommand takes, the output format, and the
//! command model ([`Command`], [`Invocation`], [`Effects`]) and its [`Failure`]. Commands depend on this and
//! on [`crate::session`] and [`crate::output`], never on each other or on the registry.

pub use crate::command::{Command, Effects, Invocation};
pub use crate::exit::Failure;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// The longest `--timeout` accepted: one day, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

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
