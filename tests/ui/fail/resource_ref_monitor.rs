//! PCL0023, PCL0239: a ServiceMonitor's endpoints name a port of a Service its selector selects;
//! a selector that selects no Service of the app.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080, metrics: 9090 },
    }
    service api -> api { ports: { http: 80 => http, metrics: 9090 => metrics } }

    resource ServiceMonitor api {
        spec: { selector: { matchLabels: { "app.kubernetes.io/name": "shop" } }, endpoints: [{ port: metrcs }] },
    }
    resource ServiceMonitor db {
        spec: { selector: { matchLabels: { "app.kubernetes.io/name": "db" } }, endpoints: [{ port: metrics }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
