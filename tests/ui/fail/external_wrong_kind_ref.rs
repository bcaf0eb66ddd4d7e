//! PCL0011/PCL0038: an external Secret is not a ConfigMap, and references still check names.

piceli::app! {
    app demo;

    external secret web-tls;
    external service_account runner;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        service_account: runer,
        env_from: [config(web-tls)],
        volumes: { certs: secret(web-tsl) },
        mounts: { "/etc/tls": certs },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
