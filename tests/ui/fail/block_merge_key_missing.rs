//! PCL0048: items of keyed lists need their key (a volume's, container's, env var's and pull secret's name, a port's containerPort).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: {
            volumes: [{ emptyDir: {} }],
            imagePullSecrets: [{}],
            initContainers: [{ image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d" }],
        },
        container: { ports: [{ name: "http" }], env: [{ value: "x" }] },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
