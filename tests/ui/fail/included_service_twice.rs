//! A Service the app declares with the name of a Service of an included file: both would be applied.

piceli::app! {
    app demo;
    include yaml("fixtures/web.yaml");

    deployment front {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }
    service web -> front { port: 80 => http }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
