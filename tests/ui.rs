//! Compile-time checks: every `fail/` case must fail with exactly its `.stderr` snapshot, every `pass/`
//! case must build. Refresh snapshots with `TRYBUILD=overwrite cargo test --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("examples/hello/src/main.rs");
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
