//! PCL0008, PCL0009, PCL0239: a PodMonitor's `(pods NAME)` names a workload of the app, its
//! podMetricsEndpoints name a container port of the pods it selects (by name or number), and a written
//! selector selects pods of the app.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080, metrics: 9090 },
    }

    resource PodMonitor api {
        spec: { selector: (pods api), podMetricsEndpoints: [{ port: metrcs }, { portNumber: 9091 }] },
    }
    resource PodMonitor web {
        spec: { selector: (pods apj), podMetricsEndpoints: [] },
    }
    resource PodMonitor db {
        spec: { selector: { matchLabels: { "app.kubernetes.io/component": "db" } }, podMetricsEndpoints: [{ port: metrics }] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
