//! PCL0024: a target override of a field that cannot be overridden.

piceli::app! {
    app demo;

    target staging = local(namespace: "demo") {
        web.replica: 2,
    };

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
