//! A Rust expression in a block must give a serializable value: the error is at the expression.

struct Tolerations;

piceli::app! {
    app demo;
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: { tolerations: (Tolerations) },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
