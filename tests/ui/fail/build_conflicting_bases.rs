//! PCL0056: one package and binary built on two different bases.

piceli::app! {
    app demo;

    deployment api { image: build(package: "shop-api") }
    deployment web { image: build(package: "shop-api", base: "gcr.io/distroless/cc-debian12@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
