//! PCL0049: a block field that a first-class key sets (or that Piceli generates).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
        ports: { http: 80 },
        container: { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d", ports: [{ containerPort: 81 }], tty: true },
        pod: { containers: [] },
        spec: { replicas: 3, template: {} },
    }
    service web -> web { port: 80 => http, spec: { ports: [{ port: 81 }] } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
