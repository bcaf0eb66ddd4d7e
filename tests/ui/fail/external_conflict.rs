//! PCL0080: an external object is declared once, and never also by the app.

piceli::app! {
    app demo;

    secret api { key: from_env("API_KEY") }
    external secret api;
    external config_map ca;
    external config_map ca;
}

fn main() -> std::process::ExitCode {
    demo::main()
}
