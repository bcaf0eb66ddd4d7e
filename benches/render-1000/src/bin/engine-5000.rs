//! Plan/apply benchmark app: 2,500 Deployments + 2,500 Services (see docs/benchmarks.md).

include!(concat!(env!("OUT_DIR"), "/app_5000.rs"));

fn main() -> std::process::ExitCode {
    bench_5000::main()
}
