//! PCL0029: `from_env` naming an invalid environment variable.

piceli::app! {
    app demo;

    secret api {
        token: from_env("API TOKEN"),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
