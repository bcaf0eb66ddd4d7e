//! An app deployed from source: `deploy` builds the `tiny-app` package of the workspace it is given
//! (`--workspace DIR`, default the working directory) into an image with no container engine, shows its
//! digest in the plan, pushes it after approval and runs it by digest.
//!
//! `cargo run -p from-source -- render` prints the objects (the image as `build:tiny-app` until delivered).

piceli::app! {
    app from-source;
    target local = local(namespace: "from-source") { registry: "127.0.0.1:5000/from-source" };

    deployment tiny {
        image: build(package: "tiny-app"),
        replicas: 1,
        resources: { cpu: "50m", memory: "32Mi" },
    }
}

fn main() -> std::process::ExitCode {
    from_source::main()
}
