//! PCL0022, PCL0023: an HTTPRoute's backendRefs name a Service of the app and one of its ports (a
//! misspelt Service, a port it does not have, a Service backend with no port).

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080 },
    }
    service api -> api { port: 80 => http }

    resource HTTPRoute web {
        spec: {
            parentRefs: [{ name: "shared", namespace: "gateway-infra" }],
            rules: [{ backendRefs: [{ name: apii, port: 80 }, { name: api, port: 8080 }, { name: api }] }],
        },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
