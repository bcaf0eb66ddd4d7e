//! A controller on a name that is not its custom resource type's CRD name fails the build (PCL0175 at
//! the name), when the type is declared with `#[piceli::custom_resource]`.

#![allow(dead_code)]

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context};

    #[piceli::custom_resource(group = "example.com", version = "v1", kind = "ConfigMapGenerator", namespaced)]
    pub struct ConfigMapGeneratorSpec {
        pub content: String,
    }

    pub async fn generate(_g: Arc<ConfigMapGenerator>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
}

piceli::app! {
    app generators;
    operator generators { image: "ghcr.io/acme/gen:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::ops::ConfigMapGenerator;
    controller gen on configmapgenerator.example.com => ops::generate;
}

fn main() -> std::process::ExitCode {
    generators::main()
}
