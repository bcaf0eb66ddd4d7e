//! Every volume kind (config_map, secret, empty_dir, pvc, StatefulSet claim templates) and mount form.

piceli::app! {
    app demo;

    config_map settings { LOG_LEVEL: "info" }
    secret tls { "tls.crt": from_file("secrets/tls.crt"), "tls.key": from_file("secrets/tls.key") }
    pvc uploads { storage: "5Gi", access: ["ReadWriteOnce"], class: "standard", labels: { tier: "storage" } }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: {
            conf: config_map(settings),
            certs: secret(tls),
            scratch: empty_dir(),
            shm: empty_dir(memory: true, size_limit: "256Mi"),
            uploads: pvc(uploads),
        },
        mounts: {
            "/etc/app": volume(conf, read_only: true),
            "/etc/tls/tls.crt": volume(certs, read_only: true, sub_path: "tls.crt"),
            "/tmp": scratch,
            "/dev/shm": shm,
            "/var/uploads": uploads,
        },
    }

    stateful_set db {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        service: db,
        ports: { pg: 5432 },
        volume_claims: {
            data: { storage: "10Gi", access: ["ReadWriteOnce"] },
            wal: { storage: "1Gi" },
        },
        mounts: { "/var/lib/postgresql/data": data, "/var/lib/postgresql/wal": wal },
    }
    service db -> db { port: 5432 => pg, type: headless }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
