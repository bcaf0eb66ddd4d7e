//! PCL0086: a port range starts at a port number and does not end below it.

piceli::app! {
    app demo;

    network_policy ranges {
        pods: {},
        egress: [{ ports: [port(9000, end: 8000), port("http", end: 9000)] }],
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
