//! Which API serves each kind: discovery per group-version-kind, cached for one run; a kind the cluster
//! does not serve yet but a CustomResourceDefinition of the same plan defines is served as that CRD says.

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
    /// Served only once a CRD of the same plan is applied: nothing of it can be read or dry-run before.
    pub pending_crd: bool,
}

/// How a CustomResourceDefinition among `objects` serves `api_version`/`kind` once it is applied.
pub fn from_planned_crd(objects: &[Value], api_version: &str, kind: &str) -> Option<Served> {
    let (group, version) = api_version.split_once('/')?;
    objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .find_map(|crd| {
            let spec = &crd["spec"];
            if spec["group"] != group || spec["names"]["kind"] != kind {
                return None;
            }
            spec["versions"]
                .as_array()?
                .iter()
                .find(|v| v["name"] == version && v["served"] != false)?;
            Some(Served {
                resource: ApiResource {
                    group: group.to_string(),
                    version: version.to_string(),
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                    plural: spec["names"]["plural"].as_str()?.to_string(),
                },
                namespaced: spec["scope"] != "Cluster",
                pending_crd: true,
            })
        })
}

/// Discovery results for one run.
#[derive(Default)]
pub struct Resources {
    cache: Mutex<HashMap<GroupVersionKind, Served>>,
    /// The CustomResourceDefinitions of the plan, for the kinds they define before they are served.
    planned_crds: std::sync::Mutex<Vec<Value>>,
}

impl Resources {
    /// Remembers the CustomResourceDefinitions among `objects`: kinds they define are served as they
    /// say (marked `pending_crd`, never cached) while discovery does not know them yet.
    pub fn expect_crds(&self, objects: &[Value]) {
        if let Ok(mut crds) = self.planned_crds.lock() {
            *crds = objects
                .iter()
                .filter(|o| o["kind"] == "CustomResourceDefinition")
                .cloned()
                .collect();
        }
    }

    /// How the cluster serves a kind.
    pub async fn served(
        &self,
        client: &kube::Client,
        gvk: &GroupVersionKind,
    ) -> Result<Served, EngineError> {
        if let Some(s) = self.cache.lock().await.get(gvk) {
            return Ok(s.clone());
        }
        let api_version = gvk.api_version();
        let kind = gvk.kind.clone();
        let discovered = discovery::pinned_kind(client, gvk)
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
            });
        let (resource, caps) = match discovered {
            Ok(found) => found,
            Err(EngineError::UnknownKind { api_version, kind }) => {
                let crds = self
                    .planned_crds
                    .lock()
                    .map(|c| c.clone())
                    .unwrap_or_default();
                return from_planned_crd(&crds, &api_version, &kind)
                    .ok_or(EngineError::UnknownKind { api_version, kind });
            }
            Err(e) => return Err(e),
        };
        let served = Served {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
            pending_crd: false,
        };
        self.cache.lock().await.insert(gvk.clone(), served.clone());
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
        // A kind kube-apiserver does not serve yet (a CRD of this plan) answers a bare `404 page not
        // found`, not a NotFound Status: no object of it exists either.
        Err(kube::Error::Api(status)) if status.is_not_found() || status.code == 404 => Ok(None),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planned_crd_serves_its_kind_in_the_versions_it_serves() {
        let crd = serde_json::json!({
            "kind": "CustomResourceDefinition",
            "spec": {
                "group": "example.com",
                "names": { "kind": "Lamp", "plural": "lamps" },
                "scope": "Namespaced",
                "versions": [{ "name": "v1", "served": true }, { "name": "v0", "served": false }],
            },
        });
        let objects = [crd];
        let served = from_planned_crd(&objects, "example.com/v1", "Lamp").expect("served");
        assert_eq!(served.resource.plural, "lamps");
        assert!(served.namespaced && served.pending_crd);
        assert!(from_planned_crd(&objects, "example.com/v0", "Lamp").is_none());
        assert!(from_planned_crd(&objects, "example.org/v1", "Lamp").is_none());
        assert!(from_planned_crd(&objects, "example.com/v1", "Bulb").is_none());
    }
}
