//! Every probe kind (http_get, tcp, exec) as ready, live and startup probes, with every option.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80, admin: 8081 },
        ready: http_get("/ready", port: http, period: 5, timeout: 2),
        live: http_get("/healthz", port: 8081, initial_delay: 10, failure_threshold: 3),
        startup: tcp(port: http, failure_threshold: 30),
    }

    deployment worker {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { grpc: 9000 },
        ready: tcp(grpc),
        live: exec(["cat", "/tmp/alive"], period: 10),
        startup: http_get("/started", port: grpc),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
