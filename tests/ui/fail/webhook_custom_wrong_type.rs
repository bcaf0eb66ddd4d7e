//! A webhook on the app's own custom resource whose handler takes another type: PCL0065 at the
//! handler's path, naming the custom resource type.

#![allow(dead_code)]

mod policy {
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    use piceli::webhook::{Request, Verdict};

    #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Lamp", namespaced)]
    pub struct LampSpec {
        pub color: String,
    }

    pub async fn no_latest_tag(_req: Request<Deployment>) -> Verdict {
        Verdict::allow()
    }
}

piceli::app! {
    app lamps;

    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::policy::Lamp;
    validate lamp-color on lamps.example.com (CREATE) => policy::no_latest_tag;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}
