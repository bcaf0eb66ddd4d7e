//! The integration tests of `probe`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p probe --test it MODULE::`.

mod checks;
#[path = "../common/mod.rs"]
mod common;
mod deploy;
