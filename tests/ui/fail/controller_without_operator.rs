//! A controller in an app without an operator: PCL0071 at the first controller.

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
    controller audit on configmaps => ops::reconcile;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}
