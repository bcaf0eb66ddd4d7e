//! PCL0045: a field the CRD's schema does not have, with the closest one.

piceli::app! {
    app shop;
    crds "crds/";

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        spec: { rules: [{ backendRefs: [{ nmae: "api", port: 80 }] }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
