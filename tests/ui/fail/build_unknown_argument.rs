//! PCL0052: `build(…)` with an argument it does not have, and with no package.

piceli::app! {
    app demo;

    deployment api { image: build(package: "shop-api", profile: "dev") }
    deployment web { image: build() }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
