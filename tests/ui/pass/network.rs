//! NetworkPolicies, Ingresses with TLS, autoscalers and disruption budgets.

piceli::app! {
    app demo;

    secret tls-cert {
        type: "kubernetes.io/tls",
        "tls.crt": from_file("secrets/tls.crt"),
        "tls.key": from_file("secrets/tls.key"),
    }

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 3,
        ports: { http: 8000, metrics: 9090 },
        resources: { cpu: "250m", memory: "256Mi" },
    }
    deployment frontend {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
        ports: { http: 8080 },
    }
    stateful_set db {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        service: db,
        replicas: 1,
        ports: { pg: 5432 },
    }

    service api -> api { port: 80 => http }
    service frontend -> frontend { port: 80 => http }
    service db -> db { port: 5432 => pg, type: headless }

    ingress shop {
        host: "shop.example.com",
        class: "nginx",
        tls: tls-cert,
        paths: { "/": frontend => http, "/api": api => 80, "/static": frontend },
    }
    ingress wildcard {
        host: "*.example.com",
        paths: { "/": frontend },
    }

    network_policy db-from-api -> db { from: [api], ports: [pg] }
    network_policy api-ingress -> api { from: [frontend, namespace("monitoring")], ports: [http, 9090] }
    network_policy deny-all -> frontend {}

    autoscaler api -> api { min: 3, max: 12, cpu: 70 }
    autoscaler db -> db { min: 1, max: 3, memory: 80 }
    disruption_budget api -> api { min_available: 2 }
    disruption_budget frontend -> frontend { max_unavailable: "50%" }
    disruption_budget db -> db { min_available: "100%" }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
