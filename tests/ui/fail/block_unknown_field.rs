//! PCL0045: an unknown field in a block, with the schema's closest field; nothing inside it is checked further.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: { tolerationz: [{ operator: "Bad" }] },
        container: { image_pull_policy: "Always" },
        spec: { strategy: { type: "Recreate", rollingUpdat: {} } },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
