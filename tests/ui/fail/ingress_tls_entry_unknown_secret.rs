//! PCL0011: a Secret of an Ingress's TLS entries that is not declared.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }

    service web -> web { port: 80 => http }

    external secret shop-tls;

    ingress web {
        rules: { "shop.example.com": { "/": web }, "api.example.com": { "/": web } },
        tls: { shop-tls: ["shop.example.com"], api-tls: ["api.example.com"] },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
