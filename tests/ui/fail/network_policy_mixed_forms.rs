//! PCL0083: a network policy is written in one form: for a workload (`-> WORKLOAD`, `from:`, `ports:`) or
//! with label selectors (`pods:`, `types:`, `ingress:`, `egress:`), and the selector form needs `pods:`.

piceli::app! {
    app demo;

    network_policy arrow -> api { pods: { app: "api" } }
    network_policy from-key { pods: { app: "api" }, from: [api] }
    network_policy no-pods { ingress: [{ ports: [80] }] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
