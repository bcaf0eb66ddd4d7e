//! The app binary's subcommands, registered in one place: the list below makes the clap enum, the dispatch
//! and the `help-json` effects table. A command is its own file (its arguments, its [`Command`] impl with
//! its effects, its run); adding one is the file plus one line here.

pub mod access;
pub mod apply;
pub mod check;
pub mod deploy;
pub mod diff;
pub mod explain;
pub mod help_json;
pub mod history;
pub mod import;
pub mod new;
pub mod plan;
pub mod render;
pub mod resume;
pub mod rollback;
pub mod serve;
pub mod shell;
pub mod status;
pub mod stop;

use crate::prelude::*;
use clap::{CommandFactory, Parser, Subcommand};

/// Makes [`AppCommand`] from the list of subcommands (each a [`Command`]), its dispatch, and the effects
/// of each in the same order.
macro_rules! registry {
    ($($(#[$attr:meta])* $variant:ident($args:ty),)*) => {
        /// The subcommands.
        #[derive(Debug, Subcommand)]
        pub enum AppCommand {
            $($(#[$attr])* $variant($args),)*
        }

        impl AppCommand {
            /// Run the subcommand.
            pub fn run(&self, invocation: Invocation) -> Result<(), Failure> {
                match self {
                    $(AppCommand::$variant(command) => command.run(invocation),)*
                }
            }
        }

        /// The subcommands' effects, in the order clap lists them.
        const EFFECTS: &[Effects] = &[$(<$args as Command>::EFFECTS,)*];
    };
}

registry! {
    /// Print the app's Kubernetes objects (never reads a kubeconfig or contacts a cluster).
    Render(render::RenderArgs),
    /// Show what applying would change, field by field, and store the plan under its hash (reads and dry
    /// runs only). Exit 3 when there are changes to approve, 0 when there are none.
    Plan(plan::PlanArgs),
    /// Execute exactly the stored plan with this hash (refused, exit 2, when the hash is unknown or the
    /// cluster changed since the plan).
    Apply(apply::ApplyArgs),
    /// Finish the release an interrupted apply left running (nothing to do: exit 0), after verifying its
    /// stored plan against the approved hash; repairs a missing release record. `--abandon` ends it instead.
    Resume(resume::ResumeArgs),
    /// Run the declared checks (http, exec, metric, code) against the live release now. Exit 0 when all
    /// pass, 1 when any fails.
    Check(check::CheckArgs),
    /// Plan, then (with `--approve HASH`) apply, wait for readiness, run the checks, and roll back when
    /// the target says so. Without `--approve`: print the hash, exit 3. No changes: no approval needed,
    /// the checks run. `-o json` streams one JSON object per stage (JSON lines).
    Deploy(deploy::DeployArgs),
    /// Ask a running apply against this target to halt between steps (`resume` continues it).
    Stop(stop::StopArgs),
    /// Plan a return to an earlier release (default: the one before the live release); approve it with
    /// `apply --approve HASH` like any change. Exit 3 when it has changes.
    Rollback(rollback::RollbackArgs),
    /// The releases in the journal, newest first, with their state.
    History(history::HistoryArgs),
    /// Field-level differences: `diff A B` between two releases, `diff N` (or `diff`, the live release)
    /// between a release and the live cluster (drift). Exit 0 when none, 1 when some.
    Diff(diff::DiffArgs),
    /// Is the app up, and which URLs reach it: each workload's health, the live release, the last checks.
    /// Exit 0 when `up`, 1 when `degraded`, `down` or `unknown`.
    Status(status::StatusArgs),
    /// Serve the app's declared port forwards on 127.0.0.1 until Ctrl-C (reads only; exit 2 when a local
    /// port is taken).
    Access(access::AccessArgs),
    /// Serve the app's admission webhooks over HTTPS (HTTP/1.1 and HTTP/2) until SIGTERM, with /healthz,
    /// /readyz and /metrics: what the operator's Deployment runs. Exit 2 when it cannot start.
    Serve(serve::ServeArgs),
    /// Explain a fixed error code (PCL…).
    Explain(explain::ExplainArgs),
    /// The whole command tree, with side effects and approval rules, as JSON.
    #[command(name = "help-json")]
    HelpJson(help_json::HelpJsonArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(shell::CompletionsArgs),
    /// Print this binary's man page (roff) to stdout.
    Man(shell::ManArgs),
}

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

/// What the subcommand `name` does to the cluster (`help-json`).
pub fn effects(name: &str) -> Option<Effects> {
    AppCli::command()
        .get_subcommands()
        .position(|c| c.get_name() == name)
        .and_then(|i| EFFECTS.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_has_its_effects() {
        let names: Vec<String> = AppCli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert_eq!(names.len(), EFFECTS.len());
        assert_eq!(effects("render").map(|e| e.touches_cluster), Some("none"));
        assert_eq!(effects("apply").map(|e| e.requires_approval), Some(true));
        assert!(effects("help-json").is_some() && effects("man").is_some());
        assert!(effects("nonsense").is_none());
    }
}
