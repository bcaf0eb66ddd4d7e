//! PCL0023: a default backend to an external Service must name the port.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }

    service web -> web { port: 80 => http }

    external service billing;

    ingress web {
        host: "shop.example.com",
        paths: { "/": web },
        default: billing,
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
