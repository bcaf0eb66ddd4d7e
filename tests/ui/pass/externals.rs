//! `external KIND NAME;`: objects someone else makes, referred to from env, volumes, ingress TLS and paths,
//! and `service_account:` like declared ones (only their names are checked; their keys and ports are theirs).

piceli::app! {
    app demo;

    external secret web-tls;
    external secret db-credentials;
    external config_map ca-bundle;
    external service_account platform-runner;
    external pvc shared-data;
    external service billing;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        service_account: platform-runner,
        env: { DB_PASSWORD: secret(db-credentials.password) },
        env_from: [config(ca-bundle)],
        volumes: { certs: secret(web-tls), data: pvc(shared-data), ca: config_map(ca-bundle) },
        mounts: { "/etc/tls": volume(certs, read_only: true), "/data": data, "/etc/ca": ca },
    }
    service web -> web { port: 80 => http }
    ingress web {
        host: "web.example.com",
        tls: web-tls,
        paths: { "/": web => http, "/billing": billing => 8080, "/pay": billing => http },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
