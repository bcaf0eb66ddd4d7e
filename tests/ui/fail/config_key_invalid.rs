//! PCL0042: a ConfigMap key with a space.

piceli::app! {
    app demo;

    config_map settings {
        "log level": "info",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
