//! ConfigMaps (literals, numbers, `file(...)`) and Secrets (from_env, from_file, generated, type).
//!
//! `file(...)` paths are relative to the directory of the crate being compiled (CARGO_MANIFEST_DIR). trybuild
//! compiles each case in a generated crate at `<target-dir>/tests/trybuild/piceli/`, so with the default target
//! directory (`target/` at the workspace root, as in CI from a fresh clone) `../../../../` is the workspace root
//! and the fixture lives in `tests/ui/fixtures/`. A custom CARGO_TARGET_DIR elsewhere would break this case.

piceli::app! {
    app demo;

    config_map settings {
        LOG_LEVEL: "info",
        WORKERS: 4,
        DEBUG: false,
        "app.mode": "prod",
        "nginx.conf": file("../../../../tests/ui/fixtures/nginx.conf"),
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
