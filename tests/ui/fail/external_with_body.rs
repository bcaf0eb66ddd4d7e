//! PCL0082: an external object's line has only a kind and a name (someone else says what is in it).

piceli::app! {
    app demo;

    external secret tls { "tls.crt": from_file("tls.crt") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
