//! Every workload kind with the keys specific to it.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 3,
        command: ["nginx"],
        args: ["-g", "daemon off;"],
        pull_policy: "IfNotPresent",
        ports: { http: 80 },
        node_selector: { "kubernetes.io/os": "linux" },
    }

    stateful_set db {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        replicas: 1,
        service: db,
        ports: { pg: 5432 },
        env: { PGDATA: "/var/lib/postgresql/data/pgdata" },
        volume_claims: { data: { storage: "10Gi", access: ["ReadWriteOnce"], class: "standard" } },
        mounts: { "/var/lib/postgresql/data": data },
    }
    service db -> db { port: 5432 => pg, type: headless }

    daemon_set agent {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    job migrate {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        command: ["psql", "-c", "select 1"],
        restart: "OnFailure",
        backoff_limit: 2,
        completions: 1,
        parallelism: 1,
    }

    cron_job nightly-report {
        schedule: "30 2 * * *",
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        restart: "Never",
        command: ["psql", "-c", "select 1"],
    }

    cron_job hourly {
        schedule: "@hourly",
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
