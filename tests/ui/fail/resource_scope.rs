//! PCL0237: a namespace for a cluster-scoped kind (GatewayClass).

piceli::app! {
    app shop;
    crds "crds/";

    resource GatewayClass public {
        namespace: "edge",
        spec: { controllerName: "example.com/gateway-controller" },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
