//! Plan/apply and takeover benchmark app: 15 Deployments + 15 Services (see docs/benchmarks.md).

include!(concat!(env!("OUT_DIR"), "/app_30.rs"));

fn main() -> std::process::ExitCode {
    bench_30::main()
}
