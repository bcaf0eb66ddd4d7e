//! PCL0239: an HTTPRoute's parentRefs in the app's namespace name a Gateway `resource` of the app
//! (a misspelt one; one the app does not declare, which could be another namespace's), and a
//! `sectionName` one of its listeners.

piceli::app! {
    app shop;
    crds "crds/";

    resource Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: http, port: 80, protocol: "HTTP" }] },
    }
    resource HTTPRoute web {
        spec: { parentRefs: [{ name: publc }, { name: internal }, { name: public, sectionName: htp }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
