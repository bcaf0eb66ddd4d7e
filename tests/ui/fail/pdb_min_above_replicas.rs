//! PCL0020: a disruption budget that could never let a pod be evicted.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
    }

    disruption_budget web -> web { min_available: 3 }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
