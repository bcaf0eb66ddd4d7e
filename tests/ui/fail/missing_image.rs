//! PCL0026: a deployment without an image.

piceli::app! {
    app demo;

    deployment web {
        ports: { http: 80 },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
