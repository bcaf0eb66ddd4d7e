//! PCL0087: the labels of a network policy's selectors are valid label keys and values.

piceli::app! {
    app demo;

    network_policy bad-labels {
        pods: { "-role": "db" },
        ingress: [{ from: [pods({ app: "not valid!" }), namespaces({ "team/": "ops" })] }],
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
