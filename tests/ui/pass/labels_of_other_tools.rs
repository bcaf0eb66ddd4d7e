//! The recommended labels Piceli does not set (`instance`, `part-of`, `version`) and Helm's `helm.sh/chart`
//! are the user's to write; a selector written in `spec:` is used as written.

piceli::app! {
    app shop;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        labels: {
            "app.kubernetes.io/instance": "shop",
            "app.kubernetes.io/part-of": "shop",
            "app.kubernetes.io/version": "1.27",
            "helm.sh/chart": "web-0.1.0",
        },
        pod_labels: { "app.kubernetes.io/instance": "shop", "app.kubernetes.io/component": "web" },
        spec: {
            selector: {
                matchLabels: { "app.kubernetes.io/instance": "shop", "app.kubernetes.io/component": "web" },
            },
        },
    }
    service web -> web { port: 80 => http }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
