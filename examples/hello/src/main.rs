//! The quick-start app: nginx pinned by digest, a Service with an access forward, and an http check.
//!
//! `cargo run -p hello -- render` prints its Kubernetes objects.

piceli::app! {
    app hello;
    target local = local(namespace: "hello");

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
        ports: { http: 80 },
        ready: http_get("/", port: http),
        resources: { cpu: "100m", memory: "64Mi" },
    }

    service web -> web {
        port: 80 => http,
        access: forward(local: 18080, health: "/"),
    }

    check http(web, "/", expect: 200);
}

fn main() -> std::process::ExitCode {
    hello::main()
}
