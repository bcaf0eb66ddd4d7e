//! The integration tests of `piceli-otlp`, in one test binary: each module is one suite, run alone with
//! `cargo test -p piceli-otlp --test it MODULE::`.

mod collector;
mod export;
