//! A stand-alone `piceli-sim` binary exposing the same commands as `piceli sim` (serve, start,
//! stop, status), for running the simulator without the piceli CLI.

use clap::Parser;

/// mimalloc rather than glibc's malloc, whose per-thread arenas (the blocking pool's threads come and
/// go) kept most of what a 1,000-pod rollout freed: issue 34, docs/benchmarks.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
