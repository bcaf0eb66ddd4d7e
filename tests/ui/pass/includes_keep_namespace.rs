//! `include … { namespace: keep }`: an included object stays in the namespace it names.
//!
//! Fixture paths are relative to the crate trybuild generates; tests/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;
    target local = local(namespace: "shop");

    include yaml("fixtures/monitoring.yaml") { namespace: keep }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
