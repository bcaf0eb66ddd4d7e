//! A pod with several containers and init containers, each with its own keys.

piceli::app! {
    app demo;

    deployment web {
        replicas: 2,
        init_containers: {
            migrate: { image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5", command: ["psql", "-c", "select 1"] },
            wait-for-db: { image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5", command: ["pg_isready"] },
        },
        containers: {
            app: {
                image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
                ports: { http: 80 },
                ready: http_get("/", port: http),
                resources: { cpu: "100m", memory: "64Mi" },
                mounts: { "/cache": cache },
            },
            sidecar: {
                image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
                ports: { metrics: 9090, dns: port(53, protocol: "UDP") },
                env: { MODE: "sidecar" },
                mounts: { "/cache": volume(cache, read_only: true) },
            },
        },
        volumes: { cache: empty_dir() },
    }

    service web -> web { ports: { http: 80 => http, metrics: 9090 => metrics } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
