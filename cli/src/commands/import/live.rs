//! Reading a live namespace for `piceli import live`: discovery of every kind the cluster serves, then a
//! list of each namespaced kind in the namespace, through the kubeconfig and context given (only those),
//! in a fixed order (as an apply orders them, then by kind and name).

use piceli_import::ImportError;
use piceli_import::read::Source;
use piceli_runtime::kube::api::{Api, DynamicObject, ListParams};
use piceli_runtime::kube::discovery::{Discovery, Scope, verbs};
use std::path::Path;

/// Every object of `namespace` (the preferred version of each kind), as import sources.
pub fn read(kubeconfig: &Path, context: &str, namespace: &str) -> Result<Vec<Source>, ImportError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ImportError::Live(e.to_string()))?;
    rt.block_on(read_async(kubeconfig, context, namespace))
}

async fn read_async(
    kubeconfig: &Path,
    context: &str,
    namespace: &str,
) -> Result<Vec<Source>, ImportError> {
    let conn = piceli_runtime::engine::target::connect_to(kubeconfig, context)
        .await
        .map_err(|e| ImportError::Live(e.to_string()))?;
    let discovery = Discovery::new(conn.client.clone())
        .run()
        .await
        .map_err(|e| ImportError::Live(format!("discovery: {e}")))?;
    let mut out = Vec::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            if caps.scope != Scope::Namespaced || !caps.supports_operation(verbs::LIST) {
                continue;
            }
            if matches!(
                ar.kind.as_str(),
                "Event" | "Binding" | "LocalSubjectAccessReview"
            ) {
                continue;
            }
            let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), namespace, &ar);
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(|e| ImportError::Live(format!("listing {}: {e}", ar.plural)))?;
            for item in list.items {
                let mut v =
                    serde_json::to_value(&item).map_err(|e| ImportError::Live(e.to_string()))?;
                v["apiVersion"] = ar.api_version.clone().into();
                v["kind"] = ar.kind.clone().into();
                let name = item.metadata.name.clone().unwrap_or_default();
                out.push(Source {
                    origin: format!("{}/{} {name}", ar.api_version, ar.plural),
                    object: v,
                });
            }
        }
    }
    // Discovery lists groups in no fixed order: sorted as an apply orders them (then kind and name), the
    // module comes out the same each time.
    out.sort_by_cached_key(|s| {
        let kind = s.object["kind"].as_str().unwrap_or_default().to_string();
        let name = s.object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (piceli_runtime::engine::plan::level(&kind), kind, name)
    });
    Ok(out)
}
