//! A Service port without a name (`port: 80 => 8080`) among more than one: the API server requires each port
//! of such a Service to have a name, so the app does not build (PCL0039).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: [8080, 9090],
    }

    service web -> web { port: 80 => 8080, ports: { metrics: 9090 => 9090 } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
