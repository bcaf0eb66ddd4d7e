//! The render benchmark's app binary (1,000 Deployments + 1,000 Services); see docs/benchmarks.md.

include!(concat!(env!("OUT_DIR"), "/app.rs"));

fn main() -> std::process::ExitCode {
    bench::main()
}
