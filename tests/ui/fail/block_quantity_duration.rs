//! PCL0017/PCL0018/PCL0041: quantities and durations in blocks go through the DSL's own rules.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        container: { resources: { limits: { memory: "512m", cpu: "1 core" } } },
        pod: { terminationGracePeriodSeconds: "30 s", activeDeadlineSeconds: "1.5s" },
        spec: { strategy: { rollingUpdate: { maxSurge: "150%" } } },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
