//! PCL0004: an init container and a container with the same name (a name repeated inside one `containers:` map is PCL0043 instead).

piceli::app! {
    app demo;

    deployment web {
        init_containers: {
            app: { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d" },
        },
        containers: {
            app: { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d" },
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
