//! One file per subcommand: its arguments, what it does to the cluster (for `help-json`), and its run —
//! parse, call one operation of the runtime, print. Adding a command is its file plus the dispatch
//! (`AppCommand` in `args.rs`, the `match`es in `lib.rs`).

pub mod access;
pub mod apply;
pub mod check;
pub mod deploy;
pub mod diff;
pub mod explain;
pub mod help_json;
pub mod history;
pub mod import;
pub mod import_live;
pub mod import_pin;
pub mod new;
pub mod plan;
pub mod render;
pub mod resume;
pub mod rollback;
pub mod serve;
pub mod session;
pub mod shell;
pub mod status;
pub mod stop;

/// What a subcommand does to the cluster, as `help-json` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// Reads, writes, dry runs, or none — in words.
    pub touches_cluster: &'static str,
    /// Whether it writes only an approved plan.
    pub requires_approval: bool,
}
