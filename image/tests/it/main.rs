//! The integration tests of `piceli-image`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli-image --test it MODULE::`.

mod build;
mod registry;
mod registry_tls;
mod sim_pull;
#[path = "../support/mod.rs"]
mod support;
