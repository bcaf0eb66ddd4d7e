//! PCL0025: a path wrapped in a call that is no path type.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }

    service web -> web { port: 80 => http }

    ingress web {
        host: "shop.example.com",
        paths: { "/": web, "/healthz": exakt(web => http) },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
