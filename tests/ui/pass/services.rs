//! Service types (cluster_ip, headless, node_port with node ports, load_balancer), port forms and access.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80, metrics: 9090 },
    }

    service web -> web {
        port: 80 => http,
        access: forward(local: 18080, health: "/"),
        labels: { tier: "front" },
        annotations: { "example.com/owner": "web-team" },
    }
    service web-internal -> web { port: 8080 => 80, type: cluster_ip }
    service web-same -> web { port: 80 }
    service web-headless -> web { port: 80 => http, type: headless }
    service web-nodeport -> web {
        ports: { http: 80 => http, metrics: 9090 => metrics },
        type: node_port,
        node_ports: { http: 30080, metrics: 30090 },
        access: forward(local: 18081, port: metrics),
    }
    service web-lb -> web { port: 443 => http, type: load_balancer }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
