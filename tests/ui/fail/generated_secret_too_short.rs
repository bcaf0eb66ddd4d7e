//! PCL0020: a generated secret shorter than 8 characters.

piceli::app! {
    app demo;

    secret api {
        token: generated(length: 4),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
