//! The standalone `piceli` binary: what is not tied to one app — `explain` and `sim` (the local
//! Kubernetes API server); `new` and `import` arrive with their issues.

use clap::{Parser, Subcommand};
use piceli_cli::args::{ExplainArgs, Global};
use std::process::ExitCode;

/// Piceli: Kubernetes applications as typed Rust.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Explain a fixed error code (PCL…).
    Explain(ExplainArgs),
    /// The local Kubernetes API server: `serve` in the foreground, or `start`/`stop`/`status` it in the
    /// background.
    #[command(subcommand)]
    Sim(piceli_sim::cli::SimCommand),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return piceli_cli::exit::clap_error(e),
    };
    let result = match cli.command {
        Command::Explain(args) => piceli_cli::commands::explain::run(&cli.global, &args),
        Command::Sim(cmd) => return piceli_sim::cli::run(cmd),
    };
    piceli_cli::exit::finish(result, &cli.global)
}
