//! PCL0048: a nested API object without its required fields.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: {
            topologySpreadConstraints: [{ maxSkew: 1 }],
            affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disk" }] }] } } },
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
