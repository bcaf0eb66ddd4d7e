//! PCL0044: an attribute other than a `///` doc comment inside `app!`.

piceli::app! {
    app demo;

    /// A doc comment is fine.
    #[allow(dead_code)]
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
