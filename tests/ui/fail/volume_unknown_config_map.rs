//! PCL0011: a config_map volume of an undeclared ConfigMap.

piceli::app! {
    app demo;

    config_map settings { LOG_LEVEL: "info" }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: { conf: config_map(setings) },
        mounts: { "/etc/app": conf },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
