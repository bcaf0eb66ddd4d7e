//! The shop's API: nginx with the team's labels and the shared log shipper, routed through the team's
//! shared Gateway.

piceli::app! {
    app shop-api;
    target local = local(namespace: "shop");
    use shared_fragments::team;
    use shared_fragments::gateway_api;

    deployment api {
        replicas: 2,
        containers: {
            api: {
                image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
                ports: { http: 80 },
                ready: http_get("/", port: http),
                mounts: { "/var/log/nginx": logs },
            },
            use shared_fragments::log_shipper,
        },
        volumes: { logs: empty_dir() },
    }
    service api -> api { port: 80 => http }
    http_route shop { host: "shop.example.com", gateway: public, paths: { "/": api:http } }
}

fn main() -> std::process::ExitCode {
    shop_api::main()
}
