//! PCL0080, PCL0239: an `external gateway` the app also declares as its `resource Gateway`; a route whose
//! Gateway is a misspelt external one (did-you-mean over the external Gateways too); an `external service`
//! is not a Gateway.

piceli::app! {
    app shop;
    crds "crds/";

    external gateway shared;
    external gateway public;
    external service billing;
    resource Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: http, port: 80, protocol: "HTTP" }] },
    }
    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080 },
    }
    service api -> api { port: 80 => http }

    http_route shop { gateway: sharde, paths: { "/": api } }
    http_route pay { gateway: billing, paths: { "/": api } }
    http_route ok { gateway: shared, listener: anything, paths: { "/": api } }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
