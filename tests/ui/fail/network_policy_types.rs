//! PCL0085: `types:` lists Ingress and/or Egress once each, and keeps the directions whose rules are given
//! (Kubernetes would ignore them).

piceli::app! {
    app demo;

    network_policy sideways { pods: {}, types: ["Ingress", "Sideways", "Ingress"] }
    network_policy ignored { pods: {}, types: ["Ingress"], egress: [{ ports: [53] }] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
