//! The integration tests of `hello`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p hello --test it MODULE::`.

mod approval;
mod cluster_errors;
mod conflicts;
mod deploy;
mod engine;
mod faults;
mod guards;
mod render;
mod status_access;
