//! PCL0018: a StatefulSet claim size in milli-units.

piceli::app! {
    app demo;

    stateful_set db {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volume_claims: { data: { storage: "10m" } },
        mounts: { "/data": data },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
