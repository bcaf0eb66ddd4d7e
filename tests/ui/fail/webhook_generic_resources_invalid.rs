//! A generic webhook's resources: an empty list, a wildcard without a full group and a resource listed
//! twice are each PCL0061 at its token, with help, in one build.

#![allow(dead_code)]

mod policy {
    use piceli::kube::core::DynamicObject;
    use piceli::webhook::{Mutation, Request};

    pub fn label(_req: Request<DynamicObject>) -> Mutation {
        Mutation::none()
    }
}

piceli::app! {
    app guard;
    operator guard { image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a" }
    mutate none on [] (CREATE) => policy::label;
    mutate some on [configmaps, "*.example", secretz, configmaps] (CREATE) => policy::label;
}

fn main() -> std::process::ExitCode {
    guard::main()
}
