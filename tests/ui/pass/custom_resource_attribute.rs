//! A custom resource declared with `#[piceli::custom_resource]` through `piceli`'s paths alone (no `kube`,
//! `serde` or `schemars` named): its CRD name is checked at compile time against the controller's, and
//! the kind's own types (`#[piceli::schema]`) derive through the same paths.

#![allow(dead_code)]

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context, Event};

    /// A generator of ConfigMaps.
    #[piceli::custom_resource(
        group = "example.com",
        version = "v1",
        kind = "ConfigMapGenerator",
        namespaced,
        status = "GeneratorStatus"
    )]
    pub struct ConfigMapGeneratorSpec {
        /// The content.
        pub content: String,
        /// How often.
        pub every: Option<Every>,
    }

    /// What it reports.
    #[piceli::schema]
    #[derive(Default)]
    pub struct GeneratorStatus {
        /// Generated.
        pub generated: bool,
    }

    /// A period.
    #[piceli::schema]
    pub enum Every {
        /// Each minute.
        Minute,
        /// Each hour.
        Hour,
    }

    pub async fn generate(
        ev: Event<ConfigMapGenerator>,
        _cx: Context,
    ) -> Result<Action, piceli::kube::Error> {
        let (Event::Apply(g) | Event::Cleanup(g)) = ev;
        let _json: Option<piceli::serde_json::Value> =
            piceli::serde_json::to_value(Arc::as_ref(&g)).ok();
        Ok(Action::await_change())
    }
}

piceli::app! {
    app generators;
    operator generators { image: "ghcr.io/acme/gen:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::ops::ConfigMapGenerator;
    controller gen on configmapgenerators.example.com (finalizer: "example.com/cleanup") {
        owns: [configmaps], watches: [secrets => by_label("generator")], backoff: { base: "1s", max: "1m" },
    } => ops::generate;
}

fn main() -> std::process::ExitCode {
    use piceli::kube::CustomResourceExt;
    assert_eq!(ops::ConfigMapGenerator::crd_name(), "configmapgenerators.example.com");
    generators::main()
}
