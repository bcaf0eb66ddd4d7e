//! PCL0024: `web.env` without a variable name is not an override (it would be silently ignored).

piceli::app! {
    app demo;
    target prod = local(namespace: "prod") {
        web.env: "x",
    };
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
