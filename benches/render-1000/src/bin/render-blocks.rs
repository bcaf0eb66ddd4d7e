//! Render benchmark app: 1,000 Deployments with pod:/container:/spec: blocks + 1,000 Services (see
//! docs/benchmarks.md).

include!(concat!(env!("OUT_DIR"), "/app_blocks.rs"));

fn main() -> std::process::ExitCode {
    bench_blocks::main()
}
