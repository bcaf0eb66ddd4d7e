//! A test app of 100 objects — 10 Deployments, a Service for each, 80 ConfigMaps, kept as YAML in
//! `k8s/fleet.yaml` — for the fault-injection trials that kill a 100-object apply after each of its
//! journal commits (`tests/faults.rs`).

piceli::app! {
    app fleet;
    target local = local(namespace: "fleet");

    include yaml("k8s/fleet.yaml");
}

fn main() -> std::process::ExitCode {
    fleet::main()
}
