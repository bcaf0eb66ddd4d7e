//! PCL0022, PCL0023, PCL0239: a GRPCRoute's backendRefs and parentRefs are checked by the HTTPRoute's
//! table: a Service of the app and one of its ports, a Gateway of the app and one of its listeners.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { grpc: 9090 },
    }
    service api -> api { port: 9090 => grpc }

    resource Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: grpc, port: 443, protocol: "HTTPS" }] },
    }
    resource gateway.networking.k8s.io/v1/GRPCRoute orders {
        spec: {
            parentRefs: [{ name: publc }, { name: public, sectionName: grcp }],
            rules: [{ backendRefs: [{ name: ap, port: 9090 }, { name: api, port: 9091 }, { name: api }] }],
        },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
