//! Webhooks in every handler style (async fn, sync fn, `Validate`/`Mutate` impls, composites mixing
//! them), every option, and an operator whose certificate comes from a ClusterIssuer, with environment
//! for its `serve` container (a literal and a Secret's key).

mod policy {
    use piceli::k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
    use piceli::webhook::{Mutate, Mutation, Request, Verdict};

    pub async fn no_latest_tag(_req: Request<Deployment>) -> Verdict {
        Verdict::allow()
    }
    pub fn replicas_set(req: Request<Deployment>) -> Result<Verdict, String> {
        match req.object().spec.as_ref().and_then(|s| s.replicas) {
            Some(_) => Ok(Verdict::allow()),
            None => Err("no replicas".into()),
        }
    }
    pub fn add_team(_req: Request<Pod>) -> Mutation {
        Mutation::none()
    }
    pub struct AddTier;
    impl Mutate for AddTier {
        type Resource = Pod;
        async fn mutate(&self, _req: Request<Pod>) -> Mutation {
            Mutation::none()
        }
    }
}

piceli::app! {
    app guard;
    target prod = local(namespace: "guard-system");

    operator guard {
        image: unpinned("ghcr.io/acme/guard:1.0"),
        tls: cert_manager(cluster_issuer: "corp-ca"),
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.observability:4318", OTEL_EXPORTER_OTLP_HEADERS: secret(otel.headers) },
    }
    external secret otel;
    validate no-latest-tag on deployments.apps (CREATE, UPDATE) => policy::no_latest_tag;
    validate replicas-set on deployments.apps (*) { failure: fail, timeout: 30, objects: { tier: "web" } }
        => policy::replicas_set;
    mutate pod-defaults on pods (CREATE) { failure: ignore, timeout: 1, namespaces: { team: "a" } }
        => [policy::add_team, policy::AddTier];
    mutate tier on pods (CREATE, UPDATE) => policy::AddTier;
}

fn main() -> std::process::ExitCode {
    let hooks = guard::webhooks();
    assert_eq!(
        hooks.paths(),
        ["/validate/no-latest-tag", "/validate/replicas-set", "/mutate/pod-defaults", "/mutate/tier"]
    );
    guard::main()
}
