//! PCL0053: a base image that is not pinned by digest.

piceli::app! {
    app demo;

    deployment api { image: build(package: "shop-api", base: "gcr.io/distroless/cc-debian12:latest") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
