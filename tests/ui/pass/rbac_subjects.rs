//! Bindings to users, groups, ServiceAccounts of other namespaces and ClusterRoles the app does not
//! declare (Kubernetes' `view`, `edit`, `admin`).

piceli::app! {
    app demo;

    service_account api;
    role pod-reader {
        rules: [rule(groups: [""], resources: ["pods"], verbs: ["get"])],
    }

    role_binding readers { role: pod-reader, subjects: [user("jane@example.com"), group("devs"), api] }
    role_binding ci-reads { role: pod-reader, subjects: [service_account("ci", "deployer")] }
    role_binding viewers { role: cluster_role("view"), subjects: [group("system:authenticated")] }
    cluster_role_binding admins { role: cluster_role("cluster-admin"), subjects: [user("root@example.com")] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
