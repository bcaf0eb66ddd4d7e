//! A mistake inside a fragment is reported at the fragment's token, once per app that uses it.

piceli::fragment! {
    sidecar {
        log-shipper: { image: "docker.io/library/busybox:1.36" },
    }
}

piceli::app! {
    app demo;
    deployment web {
        containers: {
            web: { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d" },
            use sidecar,
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
