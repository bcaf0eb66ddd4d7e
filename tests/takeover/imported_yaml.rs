//! The `shop` app, imported by `piceli import`.
//!
//! `cargo run -- render` prints its objects; `// piceli:` comments mark what was changed.

piceli::app! {
    app shop;
    target local = local(namespace: "shop");

    config_map settings {
        labels: { app: "settings" },
        data: { MODE: "prod" },
    }

    pvc data {
        labels: { app: "data" },
        storage: "1Gi",
        access: ["ReadWriteOnce"],
        class: "standard",
    }

    deployment web {
        labels: { app: "web" },
        replicas: 2,
        pod_labels: { app: "web" },
        image: "docker.io/library/nginx:1.27@sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
        ports: { http: 80 },
        spec: { selector: { matchLabels: { app: "web" } } },
    }

    deployment api {
        labels: { app: "api" },
        replicas: 1,
        pod_labels: { app: "api" },
        image: "docker.io/library/nginx:1.27@sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
        ports: { http: 8080 },
        spec: { selector: { matchLabels: { app: "api" } } },
    }

    service web -> web {
        labels: { app: "web" },
        ports: { http: 80 => http },
        spec: { selector: { app: "web" } },
    }

    service api -> api {
        labels: { app: "api" },
        ports: { http: 8080 => http },
        spec: { selector: { app: "api" } },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
