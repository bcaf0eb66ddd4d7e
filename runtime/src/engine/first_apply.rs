//! The first apply to a namespace that does not exist yet: creating the namespace is the lock's first
//! step, so one apply per target holds from the first deploy on.
//!
//! The cluster Lease lives in the app's namespace. Before the namespace exists there is nothing to lock,
//! and two applies of plans made against no namespace would both write (issue 30). So an apply whose plan
//! creates the namespace creates it first — with only the ownership labels, before any precondition is
//! checked — and then takes the Lease in it: the one whose create succeeded goes on; an apply that finds
//! the namespace created since its plan stops, nothing written ("a changed precondition"). The plan's own
//! Namespace step then server-side-applies the rest of it.
//!
//! The namespace carries the hash of the plan whose apply created it ([`CREATED_BY_PLAN`]): that same
//! plan, applied again after a kill before its release was journaled, finds the namespace it made.

use super::error::EngineError;
use super::lock::LockSlot;
use super::plan::{ActionKind, Plan, is_ours};
use super::target::Connection;
use crate::render::{MANAGED_BY, MANAGED_BY_LABEL, NAME_LABEL};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long the apply that created the namespace waits for the Lease in it: another apply may hold it for
/// the moment its own precondition check takes (it then stops: the namespace is not the one it planned).
const LOCK_STEP_WAIT: Duration = Duration::from_secs(15);

/// The annotation naming the plan whose apply created the namespace.
pub const CREATED_BY_PLAN: &str = "piceli.dev/created-by-plan";

/// Whether `plan` creates its own namespace (it did not exist when the plan was made).
pub fn creates_namespace(plan: &Plan) -> bool {
    plan.actions.iter().any(|a| {
        a.object.kind == "Namespace"
            && a.object.name == plan.namespace
            && a.action == ActionKind::Create
    })
}

/// Creates the plan's namespace with the app's ownership labels and takes the lock in it. `Ok(true)`:
/// done (the namespace's precondition is this create); `Ok(false)`: nothing to do (the lock is held, or
/// the plan does not create its namespace).
pub async fn lock_first_apply(
    conn: &Connection,
    plan: &Plan,
    app: &str,
    lock: &LockSlot,
) -> Result<bool, EngineError> {
    if lock.is_held().await || !creates_namespace(plan) {
        return Ok(false);
    }
    let namespaces: Api<Namespace> = Api::all(conn.client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(plan.namespace.clone()),
            labels: Some(BTreeMap::from([
                (MANAGED_BY_LABEL.into(), MANAGED_BY.into()),
                (NAME_LABEL.into(), app.to_string()),
            ])),
            annotations: Some(BTreeMap::from([(
                CREATED_BY_PLAN.to_string(),
                plan.hash.clone(),
            )])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let params = PostParams {
        field_manager: Some("piceli".into()),
        ..PostParams::default()
    };
    match namespaces.create(&params, &namespace).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {
            return Err(EngineError::Precondition {
                object: crate::identity::ObjectKey::new("Namespace", None, &plan.namespace),
                drift: super::error::Drift::NamespaceCreatedBySomeoneElse,
            });
        }
        Err(e) => {
            return Err(EngineError::cluster(
                format!("creating Namespace/{}", plan.namespace),
                e,
            ));
        }
    }
    lock.take_within(LOCK_STEP_WAIT).await?;
    Ok(true)
}

/// Whether the plan's namespace exists because an earlier apply of this very plan created it (one killed
/// before its release was journaled): then it is the namespace the plan creates.
pub async fn created_by_this_plan(
    conn: &Connection,
    plan: &Plan,
    app: &str,
) -> Result<bool, EngineError> {
    if !creates_namespace(plan) {
        return Ok(false);
    }
    let namespaces: Api<Namespace> = Api::all(conn.client.clone());
    let live = namespaces
        .get_opt(&plan.namespace)
        .await
        .map_err(|e| EngineError::cluster(format!("reading Namespace/{}", plan.namespace), e))?;
    Ok(live.is_some_and(|ns| {
        let created_by = ns
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CREATED_BY_PLAN));
        created_by == Some(&plan.hash)
            && ns.metadata.deletion_timestamp.is_none()
            && serde_json::to_value(&ns).is_ok_and(|v| is_ours(&v, app))
    }))
}
