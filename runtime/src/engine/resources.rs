//! Which API serves each kind: discovery per group-version-kind, cached for one run.

use super::error::EngineError;
use kube::api::{Api, ApiResource, DynamicObject, GetParams, ListParams};
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

/// One live object as the server sent it (`None` when there is none). Read as JSON, without a typed
/// round trip: a GET and a list item (`listed`) have the same representation, and nothing is copied.
pub async fn read(
    client: &kube::Client,
    served: &Served,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<Value>, kube::Error> {
    let api = api_for(client, served, namespace);
    let request = kube::core::Request::new(api.resource_url())
        .get(name, &GetParams::default())
        .map_err(kube::Error::BuildRequest)?;
    match client.request::<Value>(request).await {
        Ok(object) => Ok(Some(object)),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The items of a list, as the server sent them (list items may come without apiVersion and kind).
pub async fn list(
    client: &kube::Client,
    served: &Served,
    namespace: Option<&str>,
    params: &ListParams,
) -> Result<Vec<Value>, kube::Error> {
    let api = api_for(client, served, namespace);
    let request = kube::core::Request::new(api.resource_url())
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    let mut list = client.request::<Value>(request).await?;
    Ok(match list.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    })
}
