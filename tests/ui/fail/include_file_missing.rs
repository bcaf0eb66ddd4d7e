//! PCL0037: an included file that does not exist.
//!
//! Include paths are relative to the directory of the crate being compiled (CARGO_MANIFEST_DIR). trybuild
//! compiles each case in a generated crate at `<target-dir>/tests/trybuild/piceli/`, so with the default target
//! directory (`target/` at the workspace root, as in CI from a fresh clone) `../../../../` is the workspace root
//! and the fixture lives in `tests/ui/fixtures/`. A custom CARGO_TARGET_DIR elsewhere would break this case.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    include yaml("../../../../tests/ui/fixtures/does-not-exist.yaml");
}

fn main() -> std::process::ExitCode {
    demo::main()
}
