//! Plan/apply benchmark app: 50 Deployments + 50 Services (see docs/benchmarks.md).

include!(concat!(env!("OUT_DIR"), "/app_100.rs"));

fn main() -> std::process::ExitCode {
    bench_100::main()
}
