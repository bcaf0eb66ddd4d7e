//! What the fault trials read from the cluster: each object's version (to count writes), Deployment
//! generations, the release record; and the trial namespace's deletion.

use piceli::k8s_openapi::api::apps::v1::Deployment;
use piceli::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use piceli_sim::RunningSim;
use std::collections::BTreeMap;

/// What shows a write of each object in the namespace: for Deployments (whose status the cluster's
/// controllers keep changing) the generation and the time of piceli's managed-fields entry; for the rest
/// the resourceVersion. The namespace itself included.
pub async fn versions(sim: &RunningSim, namespace: &str) -> BTreeMap<String, String> {
    use kube::api::{Api, ListParams};
    let client = sim.client().expect("client");
    let mut out = BTreeMap::new();
    let lp = ListParams::default();
    let rv = |m: &kube::api::ObjectMeta| m.resource_version.clone().unwrap_or_default();
    if let Ok(ns) = Api::<Namespace>::all(client.clone()).get(namespace).await {
        out.insert(format!("Namespace/{namespace}"), rv(&ns.metadata));
    }
    for d in Api::<Deployment>::namespaced(client.clone(), namespace)
        .list(&lp)
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let ours: Vec<String> = d
            .metadata
            .managed_fields
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.manager.as_deref() == Some("piceli"))
            .map(|m| format!("{:?}", m.time.map(|t| t.0)))
            .collect();
        out.insert(
            format!("Deployment/{}", d.metadata.name.clone().unwrap_or_default()),
            format!(
                "generation {} / {}",
                d.metadata.generation.unwrap_or_default(),
                ours.join(",")
            ),
        );
    }
    macro_rules! by_rv {
        ($kind:ty, $name:literal) => {
            for o in Api::<$kind>::namespaced(client.clone(), namespace)
                .list(&lp)
                .await
                .map(|l| l.items)
                .unwrap_or_default()
            {
                out.insert(
                    format!("{}/{}", $name, o.metadata.name.clone().unwrap_or_default()),
                    rv(&o.metadata),
                );
            }
        };
    }
    by_rv!(Service, "Service");
    by_rv!(ConfigMap, "ConfigMap");
    by_rv!(Secret, "Secret");
    by_rv!(ServiceAccount, "ServiceAccount");
    out
}

pub async fn generations(sim: &RunningSim, namespace: &str) -> Vec<(String, i64)> {
    let client = sim.client().expect("client");
    kube::api::Api::<Deployment>::namespaced(client, namespace)
        .list(&Default::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .map(|d| {
            (
                d.metadata.name.unwrap_or_default(),
                d.metadata.generation.unwrap_or_default(),
            )
        })
        .collect()
}

/// The release record's `(release, plan)`.
pub async fn release_record(
    sim: &RunningSim,
    namespace: &str,
    app: &str,
) -> Option<(String, String)> {
    let client = sim.client().expect("client");
    let cm = kube::api::Api::<ConfigMap>::namespaced(client, namespace)
        .get_opt(&format!("piceli-release-{app}"))
        .await
        .ok()??;
    let data = cm.data?;
    Some((data.get("release")?.clone(), data.get("plan")?.clone()))
}

pub async fn delete_namespace(sim: &RunningSim, namespace: &str) {
    let client = sim.client().expect("client");
    let _ = kube::api::Api::<Namespace>::all(client)
        .delete(namespace, &Default::default())
        .await;
}
