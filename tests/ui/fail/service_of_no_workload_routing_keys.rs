//! PCL0026: a Service without `-> WORKLOAD` given keys that route to a workload's container ports, reported
//! once at its name (no follow-on errors about its ports).

piceli::app! {
    app demo;

    service web { ports: { http: 80 => http }, type: node_port, spec: { selector: { app: "web" } } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
