//! A controller's `reconcile_all_on` function that gives no stream of `()` (PCL0075) and a `backoff`
//! function of the wrong shape (PCL0076): each reported at its path, in one build.

#![allow(dead_code)]

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context};
    use piceli::k8s_openapi::api::core::v1::ConfigMap;

    pub async fn reconcile(_cm: Arc<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
    pub fn config_changes() -> Vec<()> {
        Vec::new()
    }
    pub fn my_backoff(attempt: u32) -> u64 {
        u64::from(attempt) * 1000
    }
}

piceli::app! {
    app gens;
    operator gens { image: "ghcr.io/acme/gen:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    controller gen on configmaps { reconcile_all_on: ops::config_changes, backoff: ops::my_backoff } => ops::reconcile;
}

fn main() -> std::process::ExitCode {
    gens::main()
}
