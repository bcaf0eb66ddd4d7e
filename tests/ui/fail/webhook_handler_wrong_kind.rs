//! A validating fn registered as a mutator (it answers a Verdict): PCL0065 at the path in the composite.

#![allow(dead_code)]

mod policy {
    use piceli::k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
    use piceli::webhook::{Mutation, Request, Verdict};

    pub async fn no_latest_tag(_req: Request<Deployment>) -> Verdict {
        Verdict::allow()
    }
    pub async fn add_team(_req: Request<Pod>) -> Mutation {
        Mutation::none()
    }
}

piceli::app! {
    app guard;

    operator guard { image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a", tls: cert_manager(issuer: self_signed) }
    mutate pod-defaults on pods (CREATE) => [policy::add_team, policy::no_latest_tag];
}

fn main() -> std::process::ExitCode {
    guard::main()
}
