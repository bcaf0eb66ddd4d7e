//! PCL0055: a package name cargo cannot have.

piceli::app! {
    app demo;

    deployment api { image: build(package: "shop api") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
