//! PCL0038: a workload that runs as an undeclared ServiceAccount.

piceli::app! {
    app demo;

    service_account api;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        service_account: apii,
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
