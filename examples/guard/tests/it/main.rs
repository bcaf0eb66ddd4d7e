//! The integration tests of `guard`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p guard --test it MODULE::`.

mod cert_manager;
mod render;
mod serve;
mod serve_workers;
#[path = "../support/mod.rs"]
mod support;
