//! The `crds` app, imported by `piceli import`.
//!
//! `cargo run -- render` prints its objects; `// piceli:` comments mark what was changed.

piceli::app! {
    app crds;
    target local = local(namespace: "shop");

    // piceli: the CustomResourceDefinitions of the `resource` items (`--crds`)
    crds "../../tests/crds/";

    deployment api {
        labels: { tier: "api" },
        replicas: 2,
        pod_labels: { app: "api" },
        image: "ghcr.io/example/api:1.4@sha256:0000000000000000000000000000000000000000000000000000000000000001",
        ports: { http: 8080, metrics: 9090 },
        spec: { selector: { matchLabels: { app: "api" } } },
    }

    service api -> api {
        labels: { tier: "api" },
        ports: { http: 80 => http, metrics: 9090 => metrics },
        spec: { selector: { app: "api" } },
    }

    resource gateway.networking.k8s.io/v1/Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    }

    // piceli: HTTPRoute web routes to it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it
    external service billing;

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        labels: { tier: "edge" },
        annotations: { "example.com/owner": "team-a" },
        spec: {
            parentRefs: [{ name: "public", sectionName: "http" }],
            hostnames: ["shop.example.com"],
            rules: [
                {
                    matches: [{ path: { type: "PathPrefix", value: "/api" } }],
                    backendRefs: [{ name: "api", port: 80 }],
                },
                {
                    matches: [{ path: { type: "PathPrefix", value: "/billing" } }],
                    backendRefs: [{ name: "billing", port: 8080, weight: 1 }],
                },
            ],
        },
    }

    // piceli: HTTPRoute shared attaches to it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it
    external gateway edge;

    resource gateway.networking.k8s.io/v1/HTTPRoute shared {
        spec: { parentRefs: [{ name: "edge" }], rules: [{ backendRefs: [{ name: "api", port: 80 }] }] },
    }

    resource monitoring.coreos.com/v1/ServiceMonitor api {
        spec: {
            selector: { matchLabels: { tier: "api" } },
            endpoints: [{ port: "metrics", interval: "30s" }],
        },
    }

    resource monitoring.coreos.com/v1/PodMonitor api-pods {
        spec: { selector: { matchLabels: { app: "api" } }, podMetricsEndpoints: [{ port: "metrics" }] },
    }

    resource cert-manager.io/v1/Certificate shop-tls {
        spec: {
            secretName: "shop-tls",
            dnsNames: ["shop.example.com"],
            issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" },
        },
    }

    // piceli: kept as they are (no first-class item fits): Widget gadget
    include json("k8s/crds.json");
}

fn main() -> std::process::ExitCode {
    crds::main()
}
