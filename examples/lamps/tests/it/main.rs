//! The integration tests of `lamps`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p lamps --test it MODULE::`.

mod in_cluster;
mod render;
mod resilience;
mod serve;
mod serve_errors;
mod serve_logs;
#[path = "../support/mod.rs"]
mod support;
