//! `custom_resource` naming the spec struct instead of the kind is PCL0072 at its path, and only that:
//! a controller on the kind's resource resolves to the kind the derive generates beside the spec.

#![allow(dead_code)]

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context};

    #[piceli::custom_resource(group = "example.com", version = "v1", kind = "Lamp", namespaced)]
    pub struct LampSpec {
        pub color: String,
    }

    pub async fn reconcile(_lamp: Arc<Lamp>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
}

piceli::app! {
    app lamps;
    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::ops::LampSpec;
    controller lamp on lamps.example.com => ops::reconcile;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}
