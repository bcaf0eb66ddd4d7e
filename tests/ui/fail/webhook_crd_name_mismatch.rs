//! A webhook on a name that is not its custom resource type's CRD name fails the build (PCL0178 at the
//! name), when the type is declared with `#[piceli::custom_resource]` — also inside a generic webhook's
//! list.

#![allow(dead_code)]

mod policy {
    use piceli::kube::core::DynamicObject;
    use piceli::webhook::{Mutation, Request, Verdict};

    #[piceli::custom_resource(group = "nullable.se", version = "v1", kind = "ConfigMapGenerator", namespaced)]
    pub struct ConfigMapGeneratorSpec {
        pub content: String,
    }

    pub fn check(_req: Request<ConfigMapGenerator>) -> Verdict {
        Verdict::allow()
    }
    pub fn label(_req: Request<DynamicObject>) -> Mutation {
        Mutation::none()
    }
}

piceli::app! {
    app generators;
    operator generators { image: "ghcr.io/acme/gen:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }
    custom_resource crate::policy::ConfigMapGenerator;
    validate x on configmapgenerator.nullable.se (CREATE) => policy::check;
    mutate y on [configmaps, configmapgenerators.nullable.com] (CREATE) => policy::label;
}

fn main() -> std::process::ExitCode {
    generators::main()
}
