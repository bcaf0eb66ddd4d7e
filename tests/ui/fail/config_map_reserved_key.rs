//! PCL0050: in the short form every key is data, so labels/annotations cannot be; use data: { … }.

piceli::app! {
    app demo;

    config_map settings { labels: { tier: "web" }, MODE: "prod" }
    secret db { annotations: { a: "b" }, password: from_env("DB_PASSWORD") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
