//! Plan/apply benchmark app: 500 Deployments + 500 Services (see docs/benchmarks.md).

include!(concat!(env!("OUT_DIR"), "/app_1000.rs"));

fn main() -> std::process::ExitCode {
    bench_1000::main()
}
