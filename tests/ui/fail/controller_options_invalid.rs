//! Controller options out of shape: an unknown flag, an unparsable period, bad namespaces, an unknown key: PCL0070 (and PCL0002) at each.

#![allow(dead_code)]

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context, Controller, Event};
    use piceli::k8s_openapi::api::core::v1::{ConfigMap, Pod};

    pub async fn reconcile(_cm: Arc<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
    pub async fn tidy(_ev: Event<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
    pub struct Audit;
    impl Controller<ConfigMap> for Audit {
        type Error = String;
    }
    pub struct NotALamp;
    pub fn _unused(_: Pod) {}
}

piceli::app! {
    app lamps;
    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    controller a on configmaps (finaliser) => ops::reconcile;
    controller b on configmaps { every: "5 minutes" } => ops::reconcile;
    controller c on configmaps { namespaces: some } => ops::reconcile;
    controller d on configmaps { namespaces: [Team_A] } => ops::reconcile;
    controller e on configmaps { period: "5m" } => ops::reconcile;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}
