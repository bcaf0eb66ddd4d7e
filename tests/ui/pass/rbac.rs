//! ServiceAccounts, roles and cluster roles, role bindings and cluster role bindings.

piceli::app! {
    app demo;

    service_account api;
    service_account ci { automount: false }

    role config-reader {
        rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"])],
    }
    role pod-restarter {
        rules: [
            rule(groups: ["apps"], resources: ["deployments"], verbs: ["get", "patch"], names: ["api"]),
            rule(groups: [""], resources: ["pods"], verbs: ["delete"]),
        ],
    }
    cluster_role node-reader {
        rules: [rule(groups: [""], resources: ["nodes"], verbs: ["get", "list"])],
    }

    role_binding api-reads-config { role: config-reader, subjects: [api] }
    role_binding ci-restarts { role: pod-restarter, subjects: [ci, api] }
    role_binding api-reads-nodes-here { role: node-reader, subjects: api }
    cluster_role_binding api-reads-nodes { role: node-reader, subjects: [api] }

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        service_account: api,
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
