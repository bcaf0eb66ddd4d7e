//! A webhook on `PLURAL.GROUP` that is neither a 1.33 resource nor one of the app's custom resources:
//! PCL0061 at the resource, pointing at `custom_resource`.

#![allow(dead_code)]

mod policy {
    use piceli::webhook::{Request, Verdict};

    #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Lamp", namespaced)]
    pub struct LampSpec {
        pub color: String,
    }

    pub async fn check(_req: Request<Lamp>) -> Verdict {
        Verdict::allow()
    }
}

piceli::app! {
    app lamps;

    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::policy::Lamp;
    validate bulb-color on bulbs.example.com (CREATE) => policy::check;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}
