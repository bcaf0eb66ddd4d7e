//! The command model: a subcommand is a value ([`Command`]) that says what it does to the cluster and runs
//! against an [`Invocation`] — the app binary's parts and the global options.

use crate::exit::Failure;
use crate::prelude::Global;
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
#[cfg(feature = "operator")]
use piceli_runtime::controller::Controllers;
#[cfg(feature = "operator")]
use piceli_runtime::webhook::Webhooks;

/// What a subcommand does to the cluster, as `help-json` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// Reads, writes, dry runs, or none — in words.
    pub touches_cluster: &'static str,
    /// Whether it writes only an approved plan.
    pub requires_approval: bool,
}

/// What a subcommand runs with: the app binary's parts, the global options, and the binary's command tree.
pub struct Invocation {
    /// The app model, with the values written as Rust expressions filled in.
    pub app: App,
    /// The app's `check code(…)` functions.
    pub code_checks: Vec<CodeCheck>,
    /// The app's operator half (what `serve` runs).
    pub operator: Operator,
    /// The options every subcommand takes.
    pub global: Global,
    /// The binary's whole command tree (`help-json`, `completions`, `man`).
    pub tree: fn() -> clap::Command,
    /// What each subcommand does to the cluster, by its name (`help-json`).
    pub effects: fn(&str) -> Option<Effects>,
}

/// The app's operator half: its admission webhooks and controllers, called only by `serve`. Without the
/// `operator` feature an app has neither (declaring one in `app!` is PCL0240), and this is empty.
#[derive(Clone, Copy)]
pub struct Operator {
    /// The app's admission webhooks.
    #[cfg(feature = "operator")]
    pub webhooks: fn() -> Webhooks,
    /// The app's controllers.
    #[cfg(feature = "operator")]
    pub controllers: fn() -> Controllers,
}

impl Default for Operator {
    /// No webhooks and no controllers.
    fn default() -> Self {
        Operator {
            #[cfg(feature = "operator")]
            webhooks: Webhooks::new,
            #[cfg(feature = "operator")]
            controllers: Controllers::default,
        }
    }
}

/// A subcommand of the app binary: its arguments (clap) are the value; the registry in
/// [`crate::commands`] lists each once.
pub trait Command {
    /// What it does to the cluster, for `help-json`.
    const EFFECTS: Effects;
    /// Run it: parse nothing more, call one operation of the runtime, print.
    fn run(&self, invocation: Invocation) -> Result<(), Failure>;
}
