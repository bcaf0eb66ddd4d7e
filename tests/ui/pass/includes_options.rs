//! Options of included files: `{ namespace: keep }` (an object stays in the namespace it names) and
//! `{ images: unpinned }` (images without a digest accepted); `include objects((…))` takes both too (its
//! objects are checked when the binary runs).
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;
    target local = local(namespace: "shop");

    include yaml("fixtures/monitoring.yaml") { namespace: keep }
    include yaml("fixtures/unpinned.yaml") { images: unpinned }
    include objects((other_team())) { namespace: keep, images: unpinned }
}

fn other_team() -> Vec<piceli::Object> {
    Vec::new()
}

fn main() -> std::process::ExitCode {
    demo::main()
}
