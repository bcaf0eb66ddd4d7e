//! A `Validate` impl for ConfigMaps registered on pods: PCL0065 at the handler's path.

#![allow(dead_code)]

mod policy {
    use piceli::k8s_openapi::api::core::v1::ConfigMap;
    use piceli::webhook::{Request, Validate, Verdict};

    pub struct NoSecrets;
    impl Validate for NoSecrets {
        type Resource = ConfigMap;
        async fn validate(&self, _req: Request<ConfigMap>) -> Verdict {
            Verdict::allow()
        }
    }
}

piceli::app! {
    app guard;

    operator guard { image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a", tls: cert_manager(issuer: self_signed) }
    validate no-secrets on pods (CREATE) => policy::NoSecrets;
}

fn main() -> std::process::ExitCode {
    guard::main()
}
