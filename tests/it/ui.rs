//! Compile-time checks: every `fail/` case must fail with exactly its `.stderr` snapshot, every `pass/`
//! case must build. Refresh snapshots with `TRYBUILD=overwrite cargo test -p piceli --test it ui::` and review the diff.
//!
//! trybuild compiles each case in a generated crate at `<target-dir>/tests/trybuild/piceli/`, and the DSL
//! resolves `include yaml(…)`/`file(…)` paths against the compiled crate's directory (CARGO_MANIFEST_DIR).
//! So the fixtures are copied next to that crate first, and cases name them `fixtures/…` (the vendored CRDs
//! of `tests/crds/`: `crds/…`): this works with
//! any target directory (`CARGO_TARGET_DIR=/tmp/x cargo test -p piceli --test it ui::`).

use std::path::{Path, PathBuf};

/// The crate trybuild generates: `<target-dir>/tests/trybuild/<package>/`. Cargo sets CARGO_TARGET_TMPDIR
/// to `<target-dir>/tmp` for integration tests; trybuild reads the same target directory from cargo.
fn trybuild_crate_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory");
    target
        .join("tests")
        .join("trybuild")
        .join(env!("CARGO_PKG_NAME"))
}

fn copy_fixtures() {
    // The fixtures as `fixtures/`, the vendored CRDs (`tests/crds/`) as `crds/`.
    for (from, to) in [("tests/ui/fixtures", "fixtures"), ("tests/crds", "crds")] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(from);
        let to = trybuild_crate_dir().join(to);
        std::fs::create_dir_all(&to).expect("create a fixtures directory of the trybuild crate");
        for entry in std::fs::read_dir(&from).expect("a fixtures directory") {
            let entry = entry.expect("a fixture");
            if entry.path().extension().is_some_and(|e| e == "yaml") || to.ends_with("fixtures") {
                std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy a fixture");
            }
        }
    }
}

#[test]
fn ui() {
    copy_fixtures();
    let t = trybuild::TestCases::new();
    t.pass("examples/hello/src/main.rs");
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
