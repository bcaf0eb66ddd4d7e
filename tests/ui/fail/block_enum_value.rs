//! PCL0047: a value that is not one of the API field's values, with the closest.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        container: { imagePullPolicy: "Allways" },
        pod: {
            restartPolicy: "Sometimes",
            tolerations: [{ key: "gpu", operator: "Exist", effect: "NoSchedul" }],
        },
        spec: { strategy: { type: "Rolling" } },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
