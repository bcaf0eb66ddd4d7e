//! Generated secret values: random text (and its older spelling), a template of other keys, a CA, a
//! certificate it signs and a self-signed one; env vars read the keys a TLS generator fills.

piceli::app! {
    app demo;

    secret db {
        password: generate(random(32)),
        legacy: generated(length: 16),
        url: generate(template("postgres://app:{password}@db/app?x={{literal}}")),
        dsn: generate(template("{url}&sslmode=require")),
    }
    secret ca { tls: generate(tls_self_signed(hosts: ["demo-ca"], days: 3650, ca: true)) }
    secret web-tls { tls: generate(tls_signed_by(ca, hosts: ["web", "web.demo.svc"], days: 90)) }
    secret db-tls { tls: generate(tls_self_signed(hosts: ["db", "10.0.0.7", "*.db.demo.svc"])) }
    secret files-ca {
        "tls.crt": from_file("secrets/ca.crt"),
        "tls.key": from_file("secrets/ca.key"),
    }
    secret api-tls { server: generate(tls_signed_by(files-ca, hosts: ["api"], days: 30)) }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: {
            DATABASE_URL: secret(db.url),
            CA: secret(web-tls.ca.crt),
            SERVER_CERT: secret(api-tls.server.crt),
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
