//! PCL0022, PCL0023, PCL0025, PCL0046: `(service NAME)` names a Service of the app (did-you-mean), a
//! ServiceMonitor's endpoints are checked through it, the shorthand names a Service or pods, and goes
//! where the schema takes a label selector.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8080, metrics: 9090 },
    }
    service api -> api { ports: { http: 80 => http, metrics: 9090 => metrics } }

    resource ServiceMonitor api {
        spec: { selector: (service api), endpoints: [{ port: metrcs }] },
    }
    resource ServiceMonitor db {
        spec: { selector: (service apii), endpoints: [{ port: metrics }] },
    }
    resource ServiceMonitor web {
        spec: { selector: (servce api), endpoints: [{ port: metrics }] },
    }
    resource HTTPRoute web {
        spec: { hostnames: [(service api)] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
