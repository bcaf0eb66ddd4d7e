//! PCL0047: a value the CRD's enum does not list, with the closest one.

piceli::app! {
    app shop;
    crds "crds/";

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        spec: { rules: [{ matches: [{ path: { type: "PathPrefx", value: "/" } }] }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
