//! PCL0001: a ConfigMap name with uppercase letters is not a DNS-1123 subdomain.

piceli::app! {
    app demo;

    config_map Settings {
        LOG_LEVEL: "info",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
