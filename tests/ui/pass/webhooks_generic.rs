//! Generic webhooks: on a list of resources and on every resource of a group (`"*.GROUP"`), with
//! handlers taking `Request<DynamicObject>` in every style — a validating fn, a mutating composite and a
//! `Mutate` impl — beside a typed webhook on one resource; the operator manages its own certificate.

mod policy {
    use piceli::k8s_openapi::api::core::v1::ConfigMap;
    use piceli::kube::core::DynamicObject;
    use piceli::webhook::{Mutate, Mutation, Request, Verdict};

    pub async fn named(req: Request<DynamicObject>) -> Verdict {
        match req.object().metadata.name.as_deref() {
            Some(_) => Verdict::allow(),
            None => Verdict::deny("every object has a name"),
        }
    }
    pub fn add_label(req: Request<DynamicObject>) -> Mutation {
        let mut obj = req.object().clone();
        obj.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("labelled".into(), "yes".into());
        Mutation::object(obj)
    }
    pub struct AddTeam;
    impl Mutate for AddTeam {
        type Resource = DynamicObject;
        async fn mutate(&self, req: Request<DynamicObject>) -> Mutation {
            let mut obj = req.object().clone();
            obj.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert("team".into(), "a".into());
            Mutation::object(obj)
        }
    }
    pub fn typed(_req: Request<ConfigMap>) -> Verdict {
        Verdict::allow()
    }
}

piceli::app! {
    app guard;
    target local = local(namespace: "guard-system");
    operator guard { image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a", tls: self_managed }

    mutate add-label on [configmaps, secrets, "*.example.com"] (CREATE, UPDATE) => [policy::add_label, policy::AddTeam];
    validate named on "*.example.com" (CREATE) { failure: ignore } => policy::named;
    validate typed on configmaps (CREATE) => policy::typed;
}

fn main() -> std::process::ExitCode {
    assert_eq!(
        guard::webhooks().paths(),
        ["/mutate/add-label", "/validate/named", "/validate/typed"]
    );
    guard::main()
}
