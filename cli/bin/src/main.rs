//! The standalone `piceli` binary: what is not tied to one app — `import` (manifests or a namespace into an
//! `app!` module), `new` (a starter crate), `explain`, `sim` (the local Kubernetes API server),
//! `completions` and `man`. It takes only its own options (no app's `--target`, `--approve`, …).

use clap::{CommandFactory, Parser, Subcommand};
use piceli_cli::commands::explain::ExplainArgs;
use piceli_cli::commands::shell::CompletionsArgs;
use piceli_cli::prelude::Output;
use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: the local cluster (`piceli sim serve`) runs in this binary, and
/// glibc's per-thread arenas kept most of what a 1,000-pod rollout freed (issue 34, docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Piceli: Kubernetes applications as typed Rust.
#[derive(Debug, Parser)]
#[command(name = "piceli", version, about)]
struct Cli {
    /// Output format: `text` or `json` (one JSON document on stdout).
    #[arg(long, short = 'o', global = true, value_enum, default_value_t = Output::Text)]
    output: Output,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Turn manifests (`yaml PATH…`, `-` for stdin) or a running namespace (`live`) into an `app!` module.
    #[command(subcommand)]
    Import(piceli_cli::commands::import::ImportSource),
    /// Write a starter app crate.
    New(piceli_cli::commands::new::NewArgs),
    /// Explain a fixed error code (PCL…).
    Explain(ExplainArgs),
    /// The local Kubernetes API server: `serve` in the foreground, or `start`/`stop`/`status` it in the
    /// background.
    #[command(subcommand)]
    Sim(piceli_sim::cli::SimCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout.
    Man,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return piceli_cli::exit::clap_error(e),
    };
    let result = match &cli.command {
        Command::Import(source) => piceli_cli::commands::import::run(cli.output, source),
        Command::New(args) => piceli_cli::commands::new::run(args),
        Command::Explain(args) => piceli_cli::commands::explain::run(cli.output, args),
        Command::Sim(cmd) => return piceli_sim::cli::run(cmd.clone()),
        Command::Completions(args) => {
            piceli_cli::commands::shell::completions(Cli::command(), "piceli", args)
        }
        Command::Man => piceli_cli::commands::shell::man(Cli::command(), "piceli"),
    };
    piceli_cli::exit::finish(result, cli.output)
}
