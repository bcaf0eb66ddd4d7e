//! A generic webhook (on a list of resources) whose handler takes a typed request: PCL0065 at the
//! handler, which must take `Request<DynamicObject>`.

#![allow(dead_code)]

mod policy {
    use piceli::k8s_openapi::api::core::v1::ConfigMap;
    use piceli::webhook::{Mutation, Request};

    pub fn add_label(_req: Request<ConfigMap>) -> Mutation {
        Mutation::none()
    }
}

piceli::app! {
    app guard;
    operator guard { image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a" }
    mutate add-label on [configmaps, secrets] (CREATE) => policy::add_label;
}

fn main() -> std::process::ExitCode {
    guard::main()
}
