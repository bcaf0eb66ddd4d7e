//! A Rust expression for a map or list field that gives something else: the error points at the
//! expression and says what the field takes.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod_labels: (42),
        args: (7_u16),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
