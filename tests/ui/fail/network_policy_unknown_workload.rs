//! PCL0008: a NetworkPolicy that allows traffic from an undeclared workload.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8000 },
    }

    network_policy api-ingress -> api { from: [wbe], ports: [http] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
