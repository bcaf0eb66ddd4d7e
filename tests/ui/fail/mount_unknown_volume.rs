//! PCL0012: a mount of a volume the pod does not declare.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: { data: empty_dir() },
        mounts: { "/data": dta },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
