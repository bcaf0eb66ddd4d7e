//! Values written as Rust expressions, evaluated when the app runs.

const IMAGE: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

fn replicas() -> i64 {
    2 + 1
}

fn region() -> String {
    "eu-west-1".to_string()
}

piceli::app! {
    app demo;

    target prod = local(namespace: "demo") {
        web.replicas: (replicas() * 2),
        web.image: (IMAGE),
    };

    deployment web {
        image: (IMAGE),
        replicas: (replicas()),
        ports: { http: 80 },
        env: { REGION: (region()), WORKERS: (format!("{}", 4)) },
        resources: { cpu: ("250m"), memory: (String::from("128Mi")) },
    }

    service web -> web { port: 80 => http }

    include objects((Vec::<piceli::k8s_openapi::api::core::v1::ConfigMap>::new()));
}

fn main() -> std::process::ExitCode {
    demo::main()
}
