//! PCL0017: an override value fails the same rules as the app (a bad memory limit in one target).

piceli::app! {
    app demo;

    target prod = local(namespace: "demo") {
        web.limits.memory: "1GB",
    };

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        resources: { limits: { memory: "512Mi" } },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
