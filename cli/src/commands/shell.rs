//! `completions SHELL` and `man`: a shell completion script and a man page, generated from the same
//! command tree clap parses (so they never fall behind), for an app binary and for `piceli`.

use crate::prelude::*;
use clap::Args;
use piceli_core::Code;

/// The arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The arguments of `man` (none of its own).
#[derive(Debug, Args)]
pub struct ManArgs {}

/// What `completions` and `man` do to the cluster, for `help-json`.
const NONE: Effects = Effects {
    touches_cluster: "none",
    requires_approval: false,
};

impl Command for CompletionsArgs {
    const EFFECTS: Effects = NONE;

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        completions((invocation.tree)(), &invocation.app.name.v, self)
    }
}

impl Command for ManArgs {
    const EFFECTS: Effects = NONE;

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        man((invocation.tree)(), &invocation.app.name.v)
    }
}

/// The name the binary was started as (what the shell completes), else `fallback`.
fn bin_name(fallback: &str) -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| fallback.to_string())
}

/// Print the completion script of the command tree `cmd` for `args.shell`.
pub fn completions(
    mut cmd: clap::Command,
    fallback: &str,
    args: &CompletionsArgs,
) -> Result<(), Failure> {
    let name = bin_name(fallback);
    clap_complete::generate(args.shell, &mut cmd, name, &mut std::io::stdout());
    Ok(())
}

/// Print the man page of the command tree `cmd`.
pub fn man(cmd: clap::Command, fallback: &str) -> Result<(), Failure> {
    let name = bin_name(fallback);
    let cmd = cmd.display_name(name.clone()).bin_name(name);
    clap_mangen::Man::new(cmd)
        .render(&mut std::io::stdout())
        .map_err(|e| {
            Failure::new(
                Code::OutputFailed,
                format!("writing the man page failed: {e}"),
                "check that stdout is writable (a closed pipe, a full disk)".into(),
            )
        })
}
