//! PCL0041: a container port protocol that is not TCP, UDP or SCTP.

piceli::app! {
    app demo;

    deployment dns {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { dns: port(53, protocol: "udp") },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
