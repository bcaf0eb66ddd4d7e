//! PCL0028: a secret value written in the source.

piceli::app! {
    app demo;

    secret api {
        token: "hunter2",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
