//! Reading a live namespace for `piceli import live`: discovery of every kind the cluster serves, then a
//! list of each namespaced kind in the namespace, through the kubeconfig and context given (only those),
//! in a fixed order (as an apply orders them, then by kind and name); and, when asked, the
//! CustomResourceDefinitions the cluster serves for the custom kinds found there.

use piceli_import::ImportError;
use piceli_import::crds::CrdFile;
use piceli_import::read::Source;
use piceli_runtime::kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use piceli_runtime::kube::discovery::{Discovery, Scope, verbs};
use std::path::{Path, PathBuf};

/// The cluster's CRD files of the kinds read, and why others could not be used.
pub type Served = (Vec<CrdFile>, Vec<String>);

/// Every object of `namespace` (the preferred version of each kind), as import sources; with `crds`, the
/// cluster's CRDs of the kinds among them.
pub fn read(
    kubeconfig: &Path,
    context: &str,
    namespace: &str,
    crds: bool,
) -> Result<(Vec<Source>, Served), ImportError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ImportError::Live(e.to_string()))?;
    rt.block_on(read_async(kubeconfig, context, namespace, crds))
}

async fn read_async(
    kubeconfig: &Path,
    context: &str,
    namespace: &str,
    crds: bool,
) -> Result<(Vec<Source>, Served), ImportError> {
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
    let crds = if crds {
        served_crds(&conn.client, &out).await?
    } else {
        Default::default()
    };
    Ok((out, crds))
}

/// The `apiextensions.k8s.io/v1` CRDs the cluster serves for the group and kind of some object of
/// `sources`, each as a file `NAME.yaml` (its JSON, which is YAML: the spec, the name, no status).
/// Also returns why a CRD could not be used (reported with the skipped objects).
async fn served_crds(
    client: &piceli_runtime::kube::Client,
    sources: &[Source],
) -> Result<(Vec<CrdFile>, Vec<String>), ImportError> {
    let used: std::collections::BTreeSet<(String, String)> = sources
        .iter()
        .filter_map(|s| {
            let (group, _) = s.object["apiVersion"].as_str()?.split_once('/')?;
            Some((group.to_string(), s.object["kind"].as_str()?.to_string()))
        })
        .collect();
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ApiResource::from_gvk(&gvk));
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| ImportError::Live(format!("listing customresourcedefinitions: {e}")))?;
    let mut files = Vec::new();
    let mut unusable = Vec::new();
    for item in list.items {
        let v = serde_json::to_value(&item).map_err(|e| ImportError::Live(e.to_string()))?;
        let group = v["spec"]["group"].as_str().unwrap_or_default().to_string();
        let kind = v["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !used.contains(&(group, kind)) {
            continue;
        }
        let name = item.metadata.name.clone().unwrap_or_default();
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": { "name": name },
            "spec": v["spec"].clone(),
        });
        let text = format!(
            "# {name}: read from the cluster by `piceli import live`\n{}\n",
            serde_json::to_string_pretty(&crd).unwrap_or_default()
        );
        let path = PathBuf::from(format!("{name}.yaml"));
        // A CRD the macro could not read (no schema) leaves its objects included, as without it.
        match piceli_import::crds::parse(&text, &path) {
            Ok(found) => files.push(CrdFile {
                path,
                text,
                crds: found,
            }),
            Err(e) => unusable.push(format!(
                "CustomResourceDefinition {name}: not usable ({e}); its objects stay included"
            )),
        }
    }
    Ok((files, unusable))
}
