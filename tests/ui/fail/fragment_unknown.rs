//! `use` of a fragment that is not defined: Rust's own error at the name.

piceli::app! {
    app demo;
    use not_defined;
}

fn main() -> std::process::ExitCode {
    demo::main()
}
