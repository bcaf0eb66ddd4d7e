//! ConfigMaps (literals, numbers, `file(...)`) and Secrets (from_env, from_file, generated, type).
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;

    config_map settings {
        LOG_LEVEL: "info",
        WORKERS: 4,
        DEBUG: false,
        "app.mode": "prod",
        "nginx.conf": file("fixtures/nginx.conf"),
    }
    secret db-credentials {
        password: from_env("DEMO_DB_PASSWORD"),
        session-key: generated(length: 48),
        api-key: generated(),
    }
    secret tls-cert {
        type: "kubernetes.io/tls",
        "tls.crt": from_file("secrets/tls.crt"),
        "tls.key": from_file("secrets/tls.key"),
    }

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: {
            LOG_LEVEL: config(settings.LOG_LEVEL),
            DB_PASSWORD: secret(db-credentials.password),
            POD_IP: field("status.podIP"),
            WORKERS: 4,
            VERBOSE: true,
            "app.mode": "x",
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
