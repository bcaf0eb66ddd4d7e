//! PCL0018: memory in milli-units (`512m` is 0.512 bytes).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        resources: { memory: "512m" },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
