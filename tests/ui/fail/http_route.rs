//! PCL0022, PCL0023, PCL0025, PCL0026, PCL0233, PCL0239: an `http_route`'s Service and its port (by name,
//! resolved to the number the HTTPRoute needs; by number), its Gateway and listener, its host (the CRD's
//! pattern), its keys.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080 },
    }
    service api -> api { port: 80 => http }
    resource Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: http, port: 80, protocol: "HTTP" }] },
    }

    http_route shop {
        host: "Shop_Example",
        gateway: publc,
        paths: { "/": api:htp, "/b": apii:http, "/c": api => 81 },
        hots: "x",
    }
    http_route admin { gateway: public, listener: htp, paths: { "/": api } }
    http_route none { host: "shop.example.com" }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
