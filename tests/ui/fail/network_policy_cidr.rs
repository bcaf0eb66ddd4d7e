//! PCL0084: `cidr(…)` takes an address and a prefix length; each `except` is a smaller block inside it.

piceli::app! {
    app demo;

    network_policy blocks {
        pods: {},
        ingress: [{ from: [cidr("10.0.0.0/33"), cidr("172.17.0.0/16", except: ["10.1.0.0/24", "172.17.0.0/8"])] }],
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
