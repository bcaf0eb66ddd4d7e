//! Paths in fragments: a `pub` fragment of another crate (`shared_fragments::gateway_api`) names its
//! `crds` relative to its own crate, and they are read from there; a fragment of this crate names them
//! relative to this crate. The routes attach to the fragment's `external gateway`.

piceli::fragment! {
    monitoring {
        crds "crds/monitoring.coreos.com_servicemonitors.yaml";
    }
}

piceli::app! {
    app edge;
    use shared_fragments::gateway_api;
    use monitoring;
    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080, metrics: 9090 },
    }
    service api -> api { ports: { http: 80 => http, metrics: 9090 => metrics } }
    http_route shop { host: "shop.example.com", gateway: public, paths: { "/": api:http } }
    resource ServiceMonitor api { spec: { selector: (service api), endpoints: [{ port: metrics }] } }
}

fn main() {
    let app = edge::app();
    assert_eq!(app.resources.len(), 2);
    assert_eq!(app.externals.len(), 1);
}
