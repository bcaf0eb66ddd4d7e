//! Labels and annotations on the app, workloads, Services, PVCs and Ingresses; node selectors; `///` doc
//! comments before items and keys.

piceli::app! {
    app demo;

    labels { team: "commerce", tier: "web", "example.com/cost-center": "shop-42", empty: "" }
    annotations { "example.com/owner": "commerce@example.com", note: "free text, any characters: ok!" }

    /// The shop's web tier.
    /// Doc comments document the app and are not rendered.
    deployment web {
        /// nginx, pinned by digest.
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        labels: { version: "v2", canary: false, build: 1234 },
        annotations: { "prometheus.io/scrape": "true" },
        node_selector: { "kubernetes.io/arch": "amd64" },
    }

    service web -> web {
        port: 80 => http,
        /// Only inside the cluster.
        labels: { exposure: "internal" },
        annotations: { "service.beta.kubernetes.io/aws-load-balancer-internal": "true" },
    }

    pvc data { storage: "1Gi", labels: { backup: "daily" } }

    ingress web {
        host: "shop.example.com",
        annotations: { "nginx.ingress.kubernetes.io/rewrite-target": "/" },
        paths: { "/": web => http },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
