//! The integration tests of `piceli-sim`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli-sim --test it MODULE::`.

mod admission;
mod background;
mod bad_requests;
mod cert_manager;
mod cli;
#[path = "../common/mod.rs"]
mod common;
mod controllers;
mod cronjob_gc;
mod differential;
mod exec_logs;
mod fidelity;
mod held_events;
mod idle_turns;
mod image_pull;
mod kube_client;
mod kube_watch;
mod kubectl;
mod kubectl_apply;
mod load_faults;
mod memory;
mod portforward;
mod proxy;
mod rbac;
mod rbac_defaults;
mod request_log;
mod rollout;
mod route;
mod schemathesis;
mod watch_timing;
#[path = "../admission/webhook.rs"]
mod webhook;
mod webhook_keepalive;
mod webhook_tls;
