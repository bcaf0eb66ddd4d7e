//! PCL0031: an autoscaler targeting a daemon_set.

piceli::app! {
    app demo;

    daemon_set agent {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    autoscaler agent -> agent { min: 1, max: 3, cpu: 70 }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
