//! An operator built from its own source: `image: build(self)` makes `deploy` build this very package
//! (`cargo build --release --locked -p self-built` in `--workspace DIR`, default the working directory)
//! into an image with no container engine, show its digest in the plan, push it after approval and run it
//! by digest as the operator's `serve`.
//!
//! `cargo run -p self-built -- render` prints the operator's objects (the image as `build:self-built`
//! until delivered).

piceli::app! {
    app self-built;
    target local = local(namespace: "self-built") { registry: "127.0.0.1:5000/self-built" };

    operator self-built {
        image: build(self),
        replicas: 1,
    }
}

fn main() -> std::process::ExitCode {
    self_built::main()
}
