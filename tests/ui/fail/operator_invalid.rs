//! An operator with an unpinned image, zero replicas, an unknown issuer and environment the render sets
//! itself or that names no Secret: every problem at its token.

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

    operator guard {
        image: "ghcr.io/acme/guard:1.0",
        replicas: 0,
        tls: cert_manager(issuer: letsencrypt),
        env: { POD_NAME: "guard", TOKEN: secret(nope.token) },
    }
    validate no-latest-tag on deployments.apps (CREATE) => policy::no_latest_tag;
}

fn main() -> std::process::ExitCode {
    guard::main()
}
