//! The guard's handlers: async and sync fns, and a `Validate` impl (the class style).

use std::collections::BTreeMap;

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
