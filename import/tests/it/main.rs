//! The integration tests of `piceli-import`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli-import --test it MODULE::`.

mod custom;
mod lower;
mod lower_services_and_names;
