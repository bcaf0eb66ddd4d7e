//! PCL0233: values breaking limits of the CRD's schema (a port above its maximum, a hostname not matching its pattern).

piceli::app! {
    app shop;
    crds "crds/";
    external service api;

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        spec: { rules: [{ backendRefs: [{ name: "api", port: 70000 }] }], hostnames: ["Shop_Example"] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
