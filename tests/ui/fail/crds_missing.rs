//! PCL0234: a `crds` path that does not exist.

piceli::app! {
    app shop;
    crds "crds-not-here/";
}

fn main() -> std::process::ExitCode {
    shop::main()
}
