//! Binding subjects and external ClusterRoles: an unknown subject form (with did-you-mean), a
//! ServiceAccount namespace that is not a DNS-1123 label, an empty user, and `cluster_role("…")` naming a
//! ClusterRole the app declares.

piceli::app! {
    app demo;

    service_account api;
    cluster_role node-reader {
        rules: [rule(groups: [""], resources: ["nodes"], verbs: ["get"])],
    }

    role_binding a { role: cluster_role("view"), subjects: [usr("jane")] }
    role_binding b { role: cluster_role("view"), subjects: [service_account("Other_NS", "ci")] }
    role_binding c { role: cluster_role("view"), subjects: [user(""), api] }
    cluster_role_binding d { role: cluster_role("node-reader"), subjects: [api] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
