//! The `extra` app, imported by `piceli import`.
//!
//! `cargo run -- render` prints its objects; `// piceli:` comments mark what was changed.

piceli::app! {
    app extra;
    target local = local(namespace: "shop");

    // piceli: secret values are read from the environment when the app applies (see .env.example)
    secret db-creds {
        data: { user: from_env("DB_CREDS_USER"), password: from_env("DB_CREDS_PASSWORD") },
    }

    pvc uploads {
        storage: "5Gi",
        access: ["ReadWriteOnce"],
        class: "standard",
    }

    service_account api {
        automount: false,
    }

    role config-reader {
        rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get", "list"], names: ["settings"])],
    }

    role_binding api-reads-config {
        role: config-reader,
        subjects: [api],
    }

    deployment api {
        labels: { tier: "backend" },
        replicas: 2,
        pod_labels: { app: "api" },
        image: "ghcr.io/example/api:2.4.1@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: { DB_PASSWORD: secret(db-creds.password) },
        ports: { http: 8080, metrics: 9090 },
        mounts: { "/uploads": uploads },
        volumes: { uploads: pvc(uploads) },
        pull_secrets: [regcred],
        service_account: api,
        spec: { selector: { matchLabels: { app: "api" } } },
    }

    autoscaler api -> api {
        min: 2,
        max: 6,
        cpu: 70,
    }

    disruption_budget api -> api {
        min_available: 1,
        spec: { selector: { matchLabels: { app: "api" } } },
    }

    // piceli: `docker.io/library/busybox:1.36` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    daemon_set node-agent {
        pod_labels: { app: "node-agent" },
        image: unpinned("docker.io/library/busybox:1.36"),
        args: ["sleep", "infinity"],
        pod: {
            tolerations: [
                {
                    key: "node-role.kubernetes.io/control-plane",
                    operator: "Exists",
                    effect: "NoSchedule",
                },
            ],
        },
        spec: { selector: { matchLabels: { app: "node-agent" } } },
    }

    job migrate {
        backoff_limit: 2,
        restart: "Never",
        image: "ghcr.io/example/api:2.4.1@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        command: ["/app/migrate"],
    }

    cron_job nightly {
        schedule: "30 2 * * *",
        restart: "OnFailure",
        containers: {
            report: {
                image: "ghcr.io/example/api:2.4.1@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
                args: ["report"],
            },
        },
        spec: { concurrencyPolicy: "Forbid" },
    }

    service api -> api {
        ports: { http: 80 => http, metrics: 9090 },
        spec: { selector: { app: "api" } },
    }

    // piceli: issued by cert-manager for Certificate shop: declared `external`, so the app refers to it and never writes, adopts or prunes it
    external secret shop-tls;

    ingress shop {
        annotations: { "nginx.ingress.kubernetes.io/proxy-body-size": "8m" },
        class: "nginx",
        tls: shop-tls,
        rules: { "shop.example.com": { "/api": api => http }, "api.example.com": { "/": api => 80 } },
    }

    service payments {
        spec: { type: "ExternalName", externalName: "payments.example.net" },
    }

    service legacy {
        labels: { tier: "legacy" },
        spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    }

    ingress legacy {
        class: "nginx",
        rules: { "legacy.example.com": { "/": legacy => http } },
    }

    service warehouse {
        spec: { ports: [{ name: "grpc", port: 9000 }] },
    }

    ingress fallback {
        class: "nginx",
        default: api => http,
    }

    // piceli: Ingress portal takes its TLS certificate from it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it
    external secret admin-tls;

    ingress portal {
        class: "nginx",
        tls: {
            "shop-tls": ["portal.example.com"],
            "admin-tls": ["admin.example.com", "*.admin.example.com"],
        },
        rules: {
            "portal.example.com": {
                "/": api => http,
                "/healthz": exact(api => 80),
                "/legacy": implementation_specific(legacy => http),
            },
            "admin.example.com": { "/": api => metrics },
        },
        default: legacy => 80,
    }

    ingress docs {
        rules: {
            "docs.example.com": { "/": api => http, "/v1": api => http, "/assets": prefix(api => 80) },
        },
        path_type: "Exact",
    }

    // piceli: its rules are written as the API's `spec:` (the DSL's `paths:`/`rules:` cannot say them as they are); the Services they name are not checked by name
    ingress assets {
        class: "nginx",
        spec: {
            tls: [{ secretName: "shop-tls", hosts: [] }],
            rules: [
                {
                    host: "assets.shop.example.com",
                    http: {
                        paths: [
                            {
                                path: "/",
                                pathType: "Prefix",
                                backend: { service: { name: "api", port: { name: "http" } } },
                            },
                            {
                                path: "/bucket",
                                pathType: "ImplementationSpecific",
                                backend: {
                                    resource: {
                                        apiGroup: "storage.example.com",
                                        kind: "Bucket",
                                        name: "shop-assets",
                                    },
                                },
                            },
                        ],
                    },
                },
                {
                    http: {
                        paths: [
                            {
                                path: "/status",
                                pathType: "Exact",
                                backend: { service: { name: "api", port: { name: "http" } } },
                            },
                        ],
                    },
                },
                { host: "parked.shop.example.com" },
            ],
        },
    }

    // piceli: kept as they are (no first-class item fits): EndpointSlice warehouse-1, Endpoints legacy
    include json("k8s/extra.json");
}

fn main() -> std::process::ExitCode {
    extra::main()
}
