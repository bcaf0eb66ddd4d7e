//! The integration tests of `piceli-bin`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli-bin --test it MODULE::`.

mod import;
mod import_crate;
mod import_live;
mod import_pin;
mod new_app;
mod new_operator;
mod shell;
