//! Fragments shared by two apps: items (`use team;`) and map entries (`use log_shipper` in `containers:`),
//! spliced by `app!` and checked in each app as if written there.

piceli::fragment! {
    team {
        labels { team: "shop", "app.kubernetes.io/part-of": "shop" }
        config_map logging { LOG_FORMAT: "json" }
    }
}

piceli::fragment! {
    log_shipper {
        log-shipper: {
            image: "docker.io/library/busybox:1.36@sha256:768e5c6f5cb6db0794eec98dc7a967f40631746c32232b78a3105fb946f3ab83",
            command: ["sh", "-c", "tail -F /logs/app.log"],
            env_from: [config(logging)],
            mounts: { "/logs": logs },
        },
    }
}

piceli::app! {
    app shop-api;
    use team;
    deployment api {
        containers: {
            api: {
                image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
                ports: { http: 80 },
                mounts: { "/logs": logs },
            },
            use log_shipper,
        },
        volumes: { logs: empty_dir() },
    }
}

piceli::app! {
    app shop-worker;
    use team;
    job worker {
        containers: {
            use log_shipper,
            worker: {
                image: "docker.io/library/busybox:1.36@sha256:768e5c6f5cb6db0794eec98dc7a967f40631746c32232b78a3105fb946f3ab83",
                command: ["sh", "-c", "echo work >> /logs/app.log"],
                mounts: { "/logs": logs },
            },
        },
        volumes: { logs: empty_dir() },
    }
}

fn main() -> std::process::ExitCode {
    let app = shop_worker::app();
    assert_eq!(app.config_maps.len(), 1);
    shop_api::main()
}
