//! Targets: local and kubeconfig, with overrides of every overridable field.

piceli::app! {
    app demo;

    target local = local(namespace: "demo");
    target dev = local();
    target staging = kubeconfig("staging.kubeconfig", context: "staging", namespace: "demo-staging") {
        api.replicas: 2,
        api.env.LOG_LEVEL: "debug",
        api.env.NEW_FLAG: "on",
    };
    target prod = kubeconfig("prod.kubeconfig", context: "prod-eu", namespace: "demo") {
        api.replicas: 6,
        api.image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        api.requests.cpu: "500m",
        api.requests.memory: "256Mi",
        api.limits.cpu: "2",
        api.limits.memory: "1Gi",
        worker.env.MODE: "fast",
        rollback_on_failed_checks: true,
    };

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 3,
        env: { LOG_LEVEL: "info" },
        resources: {
            requests: { cpu: "250m", memory: "128Mi" },
            limits: { cpu: "1", memory: "512Mi" },
        },
    }

    daemon_set worker {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
