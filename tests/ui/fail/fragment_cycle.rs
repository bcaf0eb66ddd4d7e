//! PCL0051: a fragment that leads back to itself through `use`.

piceli::fragment! { first { use second; } }
piceli::fragment! { second { use first; } }

piceli::app! {
    app demo;
    use first;
}

fn main() -> std::process::ExitCode {
    demo::main()
}
