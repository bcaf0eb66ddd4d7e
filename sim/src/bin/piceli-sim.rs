//! A stand-alone `piceli-sim` binary exposing the same commands as `piceli sim` (serve, start,
//! stop, status), for running the simulator without the piceli CLI.

use clap::Parser;

/// Local Kubernetes API server.
#[derive(Debug, Parser)]
#[command(name = "piceli-sim", version)]
struct Args {
    #[command(subcommand)]
    command: piceli_sim::cli::SimCommand,
}

fn main() -> std::process::ExitCode {
    piceli_sim::cli::run(Args::parse().command)
}
