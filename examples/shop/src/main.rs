//! An online shop that uses most of the Piceli DSL: several workload kinds, config and secrets,
//! storage, routing, policies, autoscaling, RBAC, per-target overrides, checks and includes.

mod checks;
mod extra;

/// The API image, shared by the API and the migration job.
const API_IMAGE: &str = "ghcr.io/example/shop-api:2.4.1@sha256:0b1f2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8";

piceli::app! {
    app shop;

    target local = local(namespace: "shop");
    target staging = kubeconfig("staging.kubeconfig", context: "staging", namespace: "shop-staging") {
        api.replicas: 2,
        api.env.LOG_LEVEL: "debug",
    };
    target prod = kubeconfig("prod.kubeconfig", context: "prod-eu", namespace: "shop") {
        api.replicas: 6,
        api.limits.memory: "1Gi",
        rollback_on_failed_checks: true,
    };

    labels { team: "commerce" }
    annotations { "example.com/owner": "commerce@example.com" }

    config_map settings {
        LOG_LEVEL: "info",
        CURRENCY: "EUR",
        "nginx.conf": file("conf/nginx.conf"),
    }
    secret db-credentials {
        password: from_env("SHOP_DB_PASSWORD"),
        session-key: generated(length: 48),
    }
    secret tls-cert {
        type: "kubernetes.io/tls",
        "tls.crt": from_file("secrets/tls.crt"),
        "tls.key": from_file("secrets/tls.key"),
    }
    pvc uploads { storage: "5Gi", access: ["ReadWriteOnce"] }

    service_account api;
    role config-reader {
        rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"])],
    }
    role_binding api-reads-config { role: config-reader, subjects: [api] }

    deployment api {
        image: (API_IMAGE),
        replicas: 3,
        command: ["/app/shop-api"],
        args: ["--listen", "0.0.0.0:8000"],
        ports: { http: 8000, metrics: 9090 },
        env: {
            LOG_LEVEL: config(settings.LOG_LEVEL),
            DB_PASSWORD: secret(db-credentials.password),
            POD_IP: field("status.podIP"),
            WORKERS: 4,
        },
        resources: {
            requests: { cpu: "250m", memory: "256Mi" },
            limits: { cpu: "1", memory: "512Mi" },
        },
        ready: http_get("/ready", port: http, period: 5),
        live: http_get("/healthz", port: http, initial_delay: 10),
        startup: tcp(port: http, failure_threshold: 30),
        volumes: { uploads: pvc(uploads), tmp: empty_dir(size_limit: "1Gi") },
        mounts: { "/var/uploads": uploads, "/tmp": tmp },
        service_account: api,
    }

    deployment frontend {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
        ports: { http: 8080 },
        ready: tcp(port: http),
        volumes: { conf: config_map(settings) },
        mounts: { "/etc/nginx/conf.d": volume(conf, read_only: true) },
        resources: { cpu: "50m", memory: "64Mi" },
    }

    stateful_set db {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        replicas: 1,
        service: db,
        ports: { pg: 5432 },
        env: { POSTGRES_PASSWORD: secret(db-credentials.password), PGDATA: "/var/lib/postgresql/data/pgdata" },
        ready: exec(["pg_isready", "-U", "postgres"]),
        volume_claims: { data: { storage: "10Gi", access: ["ReadWriteOnce"] } },
        mounts: { "/var/lib/postgresql/data": data },
        resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { memory: "1Gi" } },
    }

    daemon_set log-agent {
        image: unpinned("docker.io/fluent/fluent-bit:3.1"),
        volumes: { varlog: empty_dir() },
        mounts: { "/var/log": volume(varlog, read_only: true) },
    }

    job migrate {
        image: (API_IMAGE),
        command: ["/app/shop-api", "migrate"],
        env: { DB_PASSWORD: secret(db-credentials.password) },
        backoff_limit: 2,
        restart: "OnFailure",
    }

    cron_job nightly-report {
        schedule: "30 2 * * *",
        image: (API_IMAGE),
        command: ["/app/shop-api", "report"],
    }

    service api -> api { ports: { http: 8000 => http, metrics: 9090 => metrics } }
    service frontend -> frontend {
        port: 80 => http,
        type: node_port,
        node_ports: { http: 30080 },
        access: forward(local: 18081, health: "/"),
    }
    service db -> db { port: 5432 => pg, type: headless }

    ingress shop {
        host: "shop.example.com",
        class: "nginx",
        tls: tls-cert,
        paths: { "/": frontend => http, "/api": api => http },
    }

    network_policy db-from-api -> db { from: [api, migrate], ports: [pg] }
    network_policy api-ingress -> api { from: [frontend, namespace("monitoring")], ports: [http, metrics] }

    autoscaler api -> api { min: 3, max: 12, cpu: 70 }
    disruption_budget api -> api { min_available: 2 }
    disruption_budget frontend -> frontend { max_unavailable: "50%" }

    check http(frontend, "/", expect: 200, timeout: "5s", retries: 3);
    check api-ready = http(api, "/ready", port: http);
    check exec(db, ["pg_isready", "-U", "postgres"], expect: 0);
    check metric(api, "/metrics", series: "shop_orders_failed_total", max: 0, port: metrics);
    check code(checks::orders_flow);

    include yaml("k8s/legacy.yaml");
    include objects((extra::objects()));
}

fn main() -> std::process::ExitCode {
    shop::main()
}
