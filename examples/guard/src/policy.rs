//! The guard's handlers: async and sync fns, and a `Validate` impl (the class style); and its own custom
//! resource, `Tenant`, with a validating and a mutating webhook typed by it.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use piceli::k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{ConfigMap, Pod},
};
use piceli::webhook::{Mutation, Request, Validate, Verdict};

/// Refuses Deployments whose containers use a `:latest` (or no) tag.
pub async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
    let pod = req
        .object()
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref());
    for c in pod.map(|p| p.containers.as_slice()).unwrap_or_default() {
        let image = c.image.as_deref().unwrap_or_default();
        let last = image.rsplit('/').next().unwrap_or(image);
        if image.ends_with(":latest") || !(last.contains(':') || last.contains('@')) {
            return Verdict::deny(format!("image {image} uses :latest"));
        }
    }
    Verdict::allow()
}

fn with_label(req: &Request<Pod>, key: &str, value: &str) -> Pod {
    let mut pod = req.object().clone();
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(key.into(), value.into());
    pod
}

/// Marks every new pod `injected=true`.
pub async fn inject_label(req: Request<Pod>) -> Mutation {
    Mutation::object(with_label(&req, "injected", "true"))
}

/// The first mutator of `pod-defaults`: `team=shop`.
pub fn add_team(req: Request<Pod>) -> Mutation {
    Mutation::object(with_label(&req, "team", "shop"))
}

/// The second mutator of `pod-defaults`: `tier=<team>-web`, from the label `add_team` set.
pub async fn add_tier(req: Request<Pod>) -> Mutation {
    let labels = req.object().metadata.labels.as_ref();
    let team = labels.and_then(|l| l.get("team")).map(String::as_str);
    let tier = format!("{}-web", team.unwrap_or("none"));
    Mutation::object(with_label(&req, "tier", &tier))
}

/// Keeps passwords out of ConfigMaps.
pub struct NoSecrets;

impl Validate for NoSecrets {
    type Resource = ConfigMap;
    async fn validate(&self, req: Request<ConfigMap>) -> Verdict {
        let data = req.object().data.as_ref();
        match data.and_then(|d| d.keys().find(|k| k.to_lowercase().contains("password"))) {
            Some(key) => Verdict::deny(format!(
                "key {key} looks like a password: put it in a Secret"
            )),
            None => Verdict::allow(),
        }
    }
}

/// A team's tenancy: who owns it and how many pods it may run.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "guard.example.com",
    version = "v1",
    kind = "Tenant",
    namespaced,
    crates(k8s_openapi = "::piceli::k8s_openapi")
)]
pub struct TenantSpec {
    /// Who answers for it (an email address).
    pub owner: String,
    /// How many pods it may run (default 10, set by `tenant_defaults`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
}

/// Refuses a Tenant without an owner's email address.
pub fn tenant_has_owner(req: Request<Tenant>) -> Verdict {
    let owner = req.object().spec.owner.trim();
    if owner.contains('@') {
        Verdict::allow()
    } else {
        let name = req.object().metadata.name.as_deref().unwrap_or_default();
        Verdict::deny(format!(
            "tenant {name} has no owner email (owner: {owner:?})"
        ))
    }
}

/// Gives a new Tenant the default pod quota.
pub fn tenant_defaults(req: Request<Tenant>) -> Mutation {
    match with_default_quota(req.object()) {
        Some(tenant) => Mutation::object(tenant),
        None => Mutation::none(),
    }
}

/// The Tenant with `pods: 10`, when it sets no quota.
fn with_default_quota(tenant: &Tenant) -> Option<Tenant> {
    if tenant.spec.pods.is_some() {
        return None;
    }
    let mut tenant = tenant.clone();
    tenant.spec.pods = Some(10);
    Some(tenant)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AdmissionReview of a Tenant, as the API server sends it.
    fn review(spec: serde_json::Value) -> Request<Tenant> {
        let body = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "0df28fbd-5f5f-11e8-bc74-36e6bb280816",
                "kind": {"group": "guard.example.com", "version": "v1", "kind": "Tenant"},
                "resource": {"group": "guard.example.com", "version": "v1", "resource": "tenants"},
                "name": "web", "namespace": "shop", "operation": "CREATE",
                "userInfo": {"username": "alice"},
                "object": {"apiVersion": "guard.example.com/v1", "kind": "Tenant",
                           "metadata": {"name": "web", "namespace": "shop"}, "spec": spec},
                "dryRun": false,
            },
        });
        Request::from_review_json(body.to_string().as_bytes()).expect("a well-formed review")
    }

    #[test]
    fn a_tenant_needs_an_owners_email() {
        assert!(
            tenant_has_owner(review(serde_json::json!({"owner": "ana@example.com"}))).is_allowed()
        );
        let refused = tenant_has_owner(review(serde_json::json!({"owner": "ana"})));
        assert!(!refused.is_allowed());
        assert_eq!(
            refused.message(),
            Some("tenant web has no owner email (owner: \"ana\")")
        );
    }

    #[test]
    fn a_new_tenant_gets_the_default_quota_once() {
        let req = review(serde_json::json!({"owner": "a@b"}));
        let defaulted = with_default_quota(req.object()).expect("no quota: the default is set");
        assert_eq!(defaulted.spec.pods, Some(10));
        let req = review(serde_json::json!({"owner": "a@b", "pods": 3}));
        assert!(
            with_default_quota(req.object()).is_none(),
            "a quota is kept"
        );
    }
}
