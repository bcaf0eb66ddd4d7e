//! The release record kept in the cluster: a ConfigMap owned by the app naming the live release, its
//! plan hash and each object's digest, so another machine (or a teammate) sees which release is live.

use super::error::EngineError;
use super::plan::{FIELD_MANAGER, Plan};
use super::target::Connection;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

/// The record's name for an app.
pub fn record_name(app: &str) -> String {
    format!("piceli-release-{app}")
}

/// Write (server-side apply) the record of a release that just succeeded.
pub async fn write(
    conn: &Connection,
    plan: &Plan,
    release: u64,
    finished_at: &str,
) -> Result<(), EngineError> {
    let digests: serde_json::Map<String, serde_json::Value> = plan
        .actions
        .iter()
        .filter_map(|a| {
            a.desired_digest
                .as_ref()
                .map(|d| (a.key().to_string(), json!(d)))
        })
        .collect();
    let record = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": record_name(&plan.app),
            "namespace": plan.namespace,
            "labels": {
                "app.kubernetes.io/name": plan.app,
                "app.kubernetes.io/managed-by": "piceli",
                "app.kubernetes.io/component": "release-record",
            },
            "annotations": { "piceli.dev/target": plan.target },
        },
        "data": {
            "release": release.to_string(),
            "plan": plan.hash,
            "target": plan.target,
            "finishedAt": finished_at,
            "objects": serde_json::Value::Object(digests).to_string(),
        },
    });
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), &plan.namespace);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&record_name(&plan.app), &params, &Patch::Apply(&record))
        .await
        .map(|_| ())
        .map_err(|e| EngineError::cluster("writing the release record", e))
}

/// The live release as the cluster records it: `(release, plan hash)`.
pub async fn read(
    conn: &Connection,
    app: &str,
    namespace: &str,
) -> Result<Option<(u64, String)>, EngineError> {
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), namespace);
    let found = api
        .get_opt(&record_name(app))
        .await
        .map_err(|e| EngineError::cluster("reading the release record", e))?;
    Ok(found.and_then(|cm| {
        let data = cm.data?;
        Some((
            data.get("release")?.parse().ok()?,
            data.get("plan")?.clone(),
        ))
    }))
}
