//! RBAC objects are named by path segments, as the API server checks them: a name such as
//! `system:aggregate-to-view` or `prometheus:reader` is written as a string, and bindings refer to it so.

piceli::app! {
    app demo;

    service_account api;

    cluster_role "demo:aggregate-to-view" {
        labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" },
        rules: [rule(groups: ["example.com"], resources: ["widgets"], verbs: ["get", "list", "watch"])],
    }
    role "demo:reader" { rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get"])] }

    cluster_role_binding "demo:api-view" { role: "demo:aggregate-to-view", subjects: [api] }
    role_binding "demo:api-reads" { role: "demo:reader", subjects: [api, user("system:serviceaccount:ci:deployer")] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
