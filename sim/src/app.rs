//! The shared state of one simulator process: store, registry of served types, token, and the
//! background tasks (polling for other processes' writes, keeping CRD-defined types current).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::SimError;
use crate::registry::{PrinterColumn, Registry, ResourceType, ScalePaths, SchemaSource};
use crate::status::ApiError;
use crate::store::Store;

/// The store key of CRDs.
pub const CRD_KEY: &str = "apiextensions.k8s.io/customresourcedefinitions";

/// State shared by every request.
pub struct App {
    pub store: Store,
    pub registry: Registry,
    pub token: String,
    pub addr: String,
    pub started: i64,
}

impl App {
    /// Opens the store and loads the CRD-defined types.
    pub fn new(dir: Option<&Path>, token: String, addr: String) -> Result<App, SimError> {
        let app = App {
            store: Store::open(dir)?,
            registry: Registry::default(),
            token,
            addr,
            started: crate::time::now_secs(),
        };
        app.reload_crds()
            .map_err(|e| SimError::Corrupt(e.message))?;
        app.bootstrap().map_err(|e| SimError::Corrupt(e.message))?;
        Ok(app)
    }

    /// Creates the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease).
    fn bootstrap(&self) -> Result<(), ApiError> {
        let Some(rt) = self.registry.lookup("", "v1", "namespaces") else {
            return Ok(());
        };
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            if self.store.get(&rt.store_key(), "", name)?.is_some() {
                continue;
            }
            let ctx = crate::object::WriteCtx {
                app: self,
                rt: &rt,
                ns: "",
                subresource: "",
                manager: "piceli-sim".into(),
                dry_run: false,
                validation: crate::validate::FieldValidation::Strict,
            };
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            match crate::object::write(&ctx, name, crate::object::Mode::Create, |_| {
                Ok(crate::object::Candidate::Replace(body))
            }) {
                Ok(_) => {}
                Err(e) if e.code == 409 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Re-reads every CRD and serves their types.
    pub fn reload_crds(&self) -> Result<(), ApiError> {
        let (crds, _) = self.store.list(CRD_KEY, None, None)?;
        let types = crds.iter().flat_map(|c| crd_types(&c.object)).collect();
        self.registry.set_crds(types);
        Ok(())
    }

    /// Starts the background tasks on the current runtime.
    pub fn start_background(self: &Arc<Self>) {
        let app = self.clone();
        let mut rx = self.store.hub().subscribe();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(e) if e.rk == CRD_KEY => {
                        let _ = app.reload_crds();
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let _ = app.reload_crds();
                    }
                    Err(_) => break,
                }
            }
        });
        if self.store.file_backed() {
            let app = self.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(200));
                loop {
                    tick.tick().await;
                    let a = app.clone();
                    let _ = tokio::task::spawn_blocking(move || a.store.poll_foreign()).await;
                }
            });
        }
    }
}

fn s(v: &Value, ptr: &str) -> String {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The types a CRD object serves (one per served version).
pub fn crd_types(crd: &Value) -> Vec<ResourceType> {
    let group = s(crd, "/spec/group");
    let kind = s(crd, "/spec/names/kind");
    let plural = s(crd, "/spec/names/plural");
    if group.is_empty() || kind.is_empty() || plural.is_empty() {
        return Vec::new();
    }
    let singular = match s(crd, "/spec/names/singular") {
        x if x.is_empty() => kind.to_lowercase(),
        x => x,
    };
    let strings = |ptr: &str| -> Vec<String> {
        crd.pointer(ptr)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .map(|v| {
            let scale = v.pointer("/subresources/scale").map(|sc| ScalePaths {
                spec_replicas: s(sc, "/specReplicasPath"),
                status_replicas: s(sc, "/statusReplicasPath"),
                label_selector: sc
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(String::from),
            });
            let columns = v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .map(|cols| {
                    cols.iter()
                        .map(|c| PrinterColumn {
                            name: s(c, "/name"),
                            type_: s(c, "/type"),
                            json_path: s(c, "/jsonPath"),
                            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_default();
            ResourceType {
                group: group.clone(),
                version: s(v, "/name"),
                plural: plural.clone(),
                singular: singular.clone(),
                kind: kind.clone(),
                namespaced: s(crd, "/spec/scope") != "Cluster",
                short_names: strings("/spec/names/shortNames"),
                categories: strings("/spec/names/categories"),
                status_subresource: v.pointer("/subresources/status").is_some(),
                scale,
                schema: SchemaSource::Crd(
                    v.pointer("/schema/openAPIV3Schema")
                        .cloned()
                        .unwrap_or(Value::Null),
                ),
                columns,
                crd: true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crds_become_types() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]}});
        let types = crd_types(&crd);
        assert_eq!(types.len(), 1);
        assert_eq!(types[0].singular, "widget");
        assert!(types[0].status_subresource);
        assert_eq!(
            types[0].scale.as_ref().map(|s| s.spec_replicas.as_str()),
            Some(".spec.replicas")
        );
    }
}
