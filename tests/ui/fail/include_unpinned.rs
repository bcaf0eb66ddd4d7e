//! PCL0074: an included object's image without a digest (each one, at the file's token), and the option
//! `images:` takes only `unpinned` (tests/ui/pass/includes_options.rs has the opt-out).
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;

    include yaml("fixtures/unpinned.yaml");
    include yaml("fixtures/objects.yaml") { images: pinned }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
