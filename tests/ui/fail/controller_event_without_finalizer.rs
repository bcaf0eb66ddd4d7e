//! A handler that takes `Event<K>` on a controller without `(finalizer)`: PCL0069 says to add it.

#![allow(dead_code)]

mod ops {
    use piceli::controller::{Action, Context, Event};
    use piceli::k8s_openapi::api::core::v1::ConfigMap;

    pub async fn tidy(_ev: Event<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
}

piceli::app! {
    app tidy;
    operator tidy { image: "ghcr.io/acme/tidy:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    controller tidy on configmaps => ops::tidy;
}

fn main() -> std::process::ExitCode {
    tidy::main()
}
