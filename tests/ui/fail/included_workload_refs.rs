//! Items referring to a workload of an included file are checked against it: PCL0009 for a port it does
//! not expose (with the closest name), PCL0024 for a target override of it.

piceli::app! {
    app demo;
    target prod = local(namespace: "prod") {
        api.replicas: 3,
    };

    include yaml("fixtures/api.yaml");
    service api -> api { port: 80 => htp }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
