//! A syntax error (missing `,` between keys) is reported by the parser.
//!
//! KNOWN GAP (snapshot shows current output): parser errors carry no PCL code and no `help:` line.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d"
        replicas: 2,
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
