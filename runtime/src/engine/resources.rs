//! Which API serves each kind: discovery per group-version-kind, cached for one run.

use super::error::EngineError;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{self, Scope};
use serde_json::Value;
use std::collections::HashMap;
use tokio::sync::Mutex;

/// A kind as the cluster serves it.
#[derive(Clone, Debug)]
pub struct Served {
    /// The resource (plural, group, version).
    pub resource: ApiResource,
    /// Namespaced (or cluster-scoped).
    pub namespaced: bool,
}

/// Discovery results for one run.
#[derive(Default)]
pub struct Resources {
    cache: Mutex<HashMap<(String, String), Served>>,
}

impl Resources {
    /// How the cluster serves an object's kind.
    pub async fn served(
        &self,
        client: &kube::Client,
        object: &Value,
    ) -> Result<Served, EngineError> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let key = (api_version.clone(), kind.clone());
        if let Some(s) = self.cache.lock().await.get(&key) {
            return Ok(s.clone());
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.clone()),
        };
        let gvk = GroupVersionKind::gvk(&group, &version, &kind);
        let (resource, caps) = discovery::pinned_kind(client, &gvk)
            .await
            .map_err(|e| match e {
                kube::Error::Api(ref s) if s.code == 404 => EngineError::UnknownKind {
                    api_version: api_version.clone(),
                    kind: kind.clone(),
                },
                kube::Error::Discovery(_) => EngineError::UnknownKind {
                    api_version: api_version.clone(),
                    kind: kind.clone(),
                },
                other => EngineError::cluster(format!("discovering {api_version} {kind}"), other),
            })?;
        let served = Served {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        self.cache.lock().await.insert(key, served.clone());
        Ok(served)
    }
}

/// The API for one object (namespaced or not).
pub fn api_for(
    client: &kube::Client,
    served: &Served,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match (served.namespaced, namespace) {
        (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, &served.resource),
        _ => Api::all_with(client.clone(), &served.resource),
    }
}
