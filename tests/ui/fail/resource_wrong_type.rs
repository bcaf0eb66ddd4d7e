//! PCL0046: a value of the wrong type for the CRD's schema (a port as a string).

piceli::app! {
    app shop;
    crds "crds/";
    external service api;

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        spec: { rules: [{ backendRefs: [{ name: "api", port: "80" }] }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
