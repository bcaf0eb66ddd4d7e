//! The command model: a subcommand is a value ([`Command`]) that says what it does to the cluster and runs
//! against an [`Invocation`] — the app binary's parts and the global options.

use crate::exit::Failure;
use crate::prelude::Global;
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
use piceli_runtime::controller::Controllers;
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
    /// The app's admission webhooks (called only by `serve`).
    pub webhooks: fn() -> Webhooks,
    /// The app's controllers (called only by `serve`).
    pub controllers: fn() -> Controllers,
    /// The options every subcommand takes.
    pub global: Global,
    /// The binary's whole command tree (`help-json`, `completions`, `man`).
    pub tree: fn() -> clap::Command,
    /// What each subcommand does to the cluster, by its name (`help-json`).
    pub effects: fn(&str) -> Option<Effects>,
}

/// A subcommand of the app binary: its arguments (clap) are the value; the registry in
/// [`crate::commands`] lists each once.
pub trait Command {
    /// What it does to the cluster, for `help-json`.
    const EFFECTS: Effects;
    /// Run it: parse nothing more, call one operation of the runtime, print.
    fn run(&self, invocation: Invocation) -> Result<(), Failure>;
}
