//! Custom resources of other projects, checked against their vendored CRDs (`tests/crds/`, copied to
//! `crds/` next to the crate trybuild generates): a Gateway API HTTPRoute, a Prometheus Operator
//! ServiceMonitor, a cert-manager Certificate, a cluster-scoped GatewayClass, a value from Rust; their
//! references to the app's items (bare names as the issue writes them) all found: the route's Gateway and
//! backend Service port, the monitor's Service and named port, the Certificate's Secret mounted by `api`;
//! the selector shorthands `(service api)` and `(pods api)` (a PodMonitor), and a GRPCRoute, whose
//! references share the HTTPRoute's table; the `http_route` shortcut (written as the issue does).

fn hosts() -> Vec<String> {
    vec!["shop.example.com".into()]
}

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080, metrics: 9090 },
        volumes: { tls: secret(shop-tls) },
        mounts: { "/tls": tls },
    }
    service api -> api { ports: { http: 80 => http, metrics: 9090 => metrics } }
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080 },
    }
    service web -> web { port: 80 => http }

    resource gateway.networking.k8s.io/v1/HTTPRoute web {
        labels: { tier: "edge" },
        spec: {
            parentRefs: [{ name: public }, { name: "shared", namespace: "gateway-infra" }],
            hostnames: (hosts()),
            rules: [{
                matches: [{ path: { type: "PathPrefix", value: "/" } }],
                backendRefs: [{ name: api, port: 80 }],
            }],
        },
    }
    resource ServiceMonitor api {
        spec: { selector: { matchLabels: { "app.kubernetes.io/name": "shop" } }, endpoints: [{ port: http, interval: "30s" }] },
    }
    resource ServiceMonitor api-metrics {
        spec: { selector: (service api), endpoints: [{ port: metrics }] },
    }
    resource PodMonitor api {
        spec: { selector: (pods api), podMetricsEndpoints: [{ port: metrics }] },
    }
    resource GRPCRoute api {
        spec: {
            parentRefs: [{ name: public, sectionName: http }],
            rules: [{ matches: [{ method: { service: "shop.Orders" } }], backendRefs: [{ name: api, port: 9090 }] }],
        },
    }
    http_route shop { host: "shop.example.com", gateway: public, paths: { "/": api:http, "/metrics": api => 9090 } }
    resource cert-manager.io/v1/Certificate shop-tls {
        spec: { secretName: "shop-tls", dnsNames: ["shop.example.com"], issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } },
    }
    resource Gateway public {
        spec: { gatewayClassName: "public", listeners: [{ name: http, port: 80, protocol: "HTTP" }] },
    }
    resource GatewayClass public {
        spec: { controllerName: "example.com/gateway-controller" },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
