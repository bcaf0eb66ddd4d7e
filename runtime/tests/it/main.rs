//! The integration tests of `piceli-runtime`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli-runtime --test it MODULE::`.

mod controller_app_fns;
mod controller_health;
mod controller_leader;
mod controller_policy;
mod controller_processes;
mod controller_sim;
#[path = "../controller/support.rs"]
mod controller_support;
mod controller_triggers;
mod private_files;
mod render_operator;
mod serve_replicas;
mod serve_self_managed;
mod serve_tls_secret;
mod webhook_generic;
mod webhook_server;
mod webhook_shutdown;
mod webhook_sim;
#[path = "../webhook/support.rs"]
mod webhook_support;
