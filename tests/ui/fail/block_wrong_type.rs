//! PCL0046: a block value of the wrong type, spanned at the value.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        container: { securityContext: { runAsUser: "root", privileged: "no" } },
        pod: { hostNetwork: 1, tolerations: { key: "gpu" } },
        spec: { minReadySeconds: three, revisionHistoryLimit: 1.5 },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
