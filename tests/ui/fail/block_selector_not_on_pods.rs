//! PCL0041: a Service's selector written in spec: must be on its workload's pods (the workload's own is).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        pod_labels: { app: "web" },
        spec: { selector: { matchLabels: { app: "web", tier: "frontend" } } },
    }
    service web -> web { port: 80 => http, spec: { selector: { app: "wbe" } } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
