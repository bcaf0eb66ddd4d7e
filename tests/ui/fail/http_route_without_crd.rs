//! PCL0235: an `http_route` is a Gateway API HTTPRoute, whose CRD the app's `crds` must define.

piceli::app! {
    app shop;
    crds "crds/monitoring.coreos.com_servicemonitors.yaml";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080 },
    }
    service api -> api { port: 80 => http }

    http_route shop { host: "shop.example.com", gateway: public, paths: { "/": api:http } }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
