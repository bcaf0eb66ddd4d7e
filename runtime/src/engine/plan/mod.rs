//! Planning: what applying the app would change, field by field, from server-side-apply dry runs compared
//! with the live objects. Read-only: GETs and `dryRun=All` patches, never a write.

use super::diff::{Change, diff};
use super::error::EngineError;
use super::hash::digest;
use super::resources::{Resources, Served, api_for};
use super::secrets::{materialize, redact};
use super::target::Connection;
use crate::identity::{ObjectKey, ObjectRef, gvk, gvk_of};
use crate::render;
use futures::{StreamExt, stream};
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use piceli_core::model::App;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod dry_run;
mod generated;
mod model;
mod object;
mod prune;

pub use dry_run::secret_values;
use dry_run::*;
pub use model::*;
use object::*;
use prune::*;

/// Our field manager.
pub const FIELD_MANAGER: &str = "piceli";
/// How many dry runs run at once.
const CONCURRENCY: usize = 16;
/// Kinds never pruned when the app stops declaring them.
pub const PROTECTED_KINDS: &[&str] = &[
    "Namespace",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Secret",
];

/// What to plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// `--adopt KIND/NAME` (case-insensitive kind).
    pub adopt: Vec<String>,
    /// `--adopt-all`.
    pub adopt_all: bool,
    /// Objects the previous release applied (pruning candidates).
    pub previous: Vec<ObjectRef>,
    /// The key for secret digests.
    pub digest_key: [u8; 32],
    /// Where `from_env` secret sources read (`--env-file`, then the process environment).
    pub env: std::sync::Arc<super::env_file::SecretEnv>,
    /// Dry-run with `force`, so fields another manager took over show as differences instead of
    /// conflicts (drift reports); plans for apply never force fields that are not the app's.
    pub force_dry_run: bool,
    /// `--take-ownership [FIELD]`: which conflicting fields to take over from other managers.
    pub take_ownership: super::conflicts::TakeOwnership,
    /// `--forget-helm-release NAME`: the Helm releases whose claim the plan removes.
    pub forget_helm: Vec<String>,
    /// `--rotate SECRET[.KEY]`: generated values to make again.
    pub rotate: Vec<String>,
    /// The CAs filled so far, for the certificates they sign (in memory only).
    pub cas: std::sync::Arc<super::secrets::Cas>,
}

/// A desired object with how the cluster serves it.
pub struct Desired {
    /// The object, secret values filled in (never printed or stored).
    pub object: Value,
    /// How it is served.
    pub served: Served,
    /// Its namespace when namespaced.
    pub namespace: Option<String>,
    /// Its apply level.
    pub level: u32,
}

/// The apply level of a kind: namespaces and CRDs, identity and RBAC, config, storage, workloads,
/// Services, then routing/policy/scaling.
pub fn level(kind: &str) -> u32 {
    match kind {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        "ServiceAccount" | "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => 2,
        "ConfigMap" | "Secret" => 3,
        "PersistentVolumeClaim" | "PersistentVolume" | "StorageClass" => 4,
        "Deployment" | "StatefulSet" | "DaemonSet" | "Job" | "CronJob" | "ReplicaSet" | "Pod" => 5,
        "Service" => 6,
        "Ingress" | "NetworkPolicy" | "HorizontalPodAutoscaler" | "PodDisruptionBudget" => 7,
        _ => 5,
    }
}

/// Whether a live object carries this app's ownership marks.
pub fn is_ours(live: &Value, app: &str) -> bool {
    let labels = &live["metadata"]["labels"];
    labels["app.kubernetes.io/managed-by"] == "piceli" && labels["app.kubernetes.io/name"] == app
}

/// Whether `--adopt` names the object: `Kind/name` (any namespace) or `Kind/namespace/name` (that one;
/// what an approved plan's adoptions are re-checked with).
fn adopting(opts: &PlanOptions, kind: &str, namespace: Option<&str>, name: &str) -> bool {
    opts.adopt_all
        || opts.adopt.iter().any(|a| {
            let parts: Vec<&str> = a.split('/').collect();
            match parts.as_slice() {
                [k, n] => k.eq_ignore_ascii_case(kind) && *n == name,
                [k, ns, n] => k.eq_ignore_ascii_case(kind) && Some(*ns) == namespace && *n == name,
                _ => false,
            }
        })
}

/// A kind the cluster does not serve, named by a `resource` item: the CRD it needs, and how to get it.
fn crd_not_served(app: &App, e: EngineError) -> EngineError {
    let EngineError::UnknownKind { api_version, kind } = e else {
        return e;
    };
    match app
        .resources
        .iter()
        .find(|r| r.api_version == api_version && r.kind == kind)
    {
        Some(r) => EngineError::CrdNotServed {
            item: r.what(),
            api_version,
            kind,
            crd: r.crd.clone(),
        },
        None => EngineError::UnknownKind { api_version, kind },
    }
}

/// Render the app for the target and resolve how each object is served.
pub async fn desired(
    conn: &Connection,
    objects: &[Value],
    default_namespace: &str,
    resources: &Resources,
) -> Result<Vec<Desired>, EngineError> {
    let mut out = Vec::with_capacity(objects.len());
    resources.expect_crds(objects);
    for o in objects {
        let served = resources.served(&conn.client, &gvk_of(o)).await?;
        let namespace = served.namespaced.then(|| {
            o["metadata"]["namespace"]
                .as_str()
                .unwrap_or(default_namespace)
                .to_string()
        });
        let kind = o["kind"].as_str().unwrap_or_default();
        out.push(Desired {
            object: o.clone(),
            served,
            namespace,
            level: level(kind),
        });
    }
    Ok(out)
}

async fn get_live(
    conn: &Connection,
    served: &Served,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<Value>, EngineError> {
    super::resources::read(&conn.client, served, namespace, name)
        .await
        .map_err(|e| EngineError::cluster(format!("reading {name}"), e))
}

/// What the plan saw of `live`, for apply to check.
pub(super) fn precondition(live: &Value, key: &[u8; 32]) -> Option<Precondition> {
    Some(Precondition {
        uid: live["metadata"]["uid"].as_str()?.to_string(),
        resource_version: live["metadata"]["resourceVersion"].as_str()?.to_string(),
        content: content_digest(live, key),
    })
}

/// Make a plan. Returns it with the desired objects (secrets filled in) that apply would send.
pub async fn plan(
    app: &App,
    conn: &Connection,
    opts: &render::Options,
    plan_opts: &PlanOptions,
) -> Result<(Plan, Vec<Desired>), EngineError> {
    let rendered = render::render(app, opts)?;
    let source = Source {
        target: rendered.target.clone().unwrap_or_else(|| "default".into()),
        namespace: rendered.namespace.clone(),
        objects: rendered.objects,
        rollback_of: None,
    };
    plan_source(app, conn, source, plan_opts).await
}

/// What a plan makes the cluster look like: the app's rendered objects, or a release's (rollback).
pub struct Source {
    /// The target's name.
    pub target: String,
    /// The namespace of namespaced objects.
    pub namespace: String,
    /// The desired objects.
    pub objects: Vec<Value>,
    /// The release restored (rollback), if any.
    pub rollback_of: Option<u64>,
}

/// Plan for explicit desired objects.
pub async fn plan_source(
    app: &App,
    conn: &Connection,
    source: Source,
    plan_opts: &PlanOptions,
) -> Result<(Plan, Vec<Desired>), EngineError> {
    let resources = conn.resources.clone();
    let rollback = source.rollback_of.is_some();
    // A name `--rotate` does not know is refused before anything is read.
    let rotations = if rollback {
        super::rotate::Rotations::new()
    } else {
        super::rotate::resolve(app, &plan_opts.rotate)?
    };
    let mut desired = desired(conn, &source.objects, &source.namespace, &resources)
        .await
        .map_err(|e| crd_not_served(app, e))?;

    let ns_served = resources
        .served(&conn.client, &gvk("v1", "Namespace"))
        .await?;
    let namespace_live = get_live(conn, &ns_served, None, &source.namespace).await?;
    let namespace_uid = namespace_live
        .as_ref()
        .and_then(|n| n["metadata"]["uid"].as_str().map(str::to_string));
    let listed = super::listed::ours(conn, &desired, &app.name.v, namespace_live.is_some()).await;
    let requires = super::externals::look_up(
        app,
        conn,
        &resources,
        &source.namespace,
        namespace_live.is_some(),
    )
    .await?;

    // Selectors are the user's once an object exists: the running workloads and Services are read first.
    let namespace_missing = namespace_live.is_none();
    let read_first = read_selecting(conn, &desired, namespace_missing, &listed).await?;
    {
        // What changes shows in the plan's diff (the pod template's new labels); the selector does not.
        let lives: Vec<Option<Value>> = read_first.iter().map(|l| l.clone().flatten()).collect();
        let mut objects: Vec<&mut Value> = desired.iter_mut().map(|d| &mut d.object).collect();
        super::selectors::keep_live(&app.name.v, &mut objects, &lives);
    }

    // Read every live object and dry-run every desired one, concurrently, keeping order.
    let key = plan_opts.digest_key;
    let scaled = autoscaled(&desired);
    let results: Vec<Result<Action, EngineError>> =
        stream::iter(desired.iter_mut().zip(read_first).map(|(d, read)| {
            let namespace_missing = namespace_live.is_none();
            let scaled = &scaled;
            let listed = &listed;
            let rotations = &rotations;
            async move {
                let on = Planning {
                    app,
                    conn,
                    opts: plan_opts,
                    key: &key,
                    namespace_missing,
                    rollback,
                    autoscaled: scaled,
                    listed,
                    rotations,
                };
                plan_one(&on, d, read).await
            }
        }))
        .buffered(CONCURRENCY)
        .collect()
        .await;
    let mut actions = Vec::with_capacity(results.len());
    let mut refused = Vec::new();
    let mut conflicts = Vec::new();
    for r in results {
        match r {
            Ok(a) => actions.push(a),
            Err(e @ EngineError::NotOwned { .. }) => refused.push(e),
            Err(EngineError::FieldConflicts(found)) => conflicts.extend(found),
            Err(e) => return Err(e),
        }
    }
    if let Some(first) = refused.into_iter().next() {
        return Err(first);
    }
    if !conflicts.is_empty() {
        // Every conflicting field of the whole plan, in one refusal.
        return Err(EngineError::FieldConflicts(conflicts));
    }
    actions.extend(prune(app, conn, &resources, &desired, plan_opts).await?);
    let helm = super::helm::releases(
        conn,
        &source.namespace,
        namespace_live.is_some(),
        &mut actions,
        &plan_opts.forget_helm,
        &key,
    )
    .await?;
    actions.sort_by_key(|a| {
        (
            a.action == ActionKind::Delete,
            if a.action == ActionKind::Delete {
                u32::MAX - a.level
            } else {
                a.level
            },
        )
    });
    let mut plan = Plan {
        version: 1,
        app: app.name.v.clone(),
        target: source.target,
        server: conn.server.clone(),
        namespace: source.namespace,
        namespace_uid,
        actions,
        objects: desired
            .iter()
            .map(|d| redact(&d.object, &key).into_owned())
            .collect(),
        rollback_of: source.rollback_of,
        requires,
        helm,
        hash: String::new(),
    };
    plan.hash = plan.compute_hash();
    Ok((plan, desired))
}

/// What planning one object needs to know of the whole plan.
struct Planning<'a> {
    app: &'a App,
    conn: &'a Connection,
    opts: &'a PlanOptions,
    key: &'a [u8; 32],
    /// The target namespace does not exist yet.
    namespace_missing: bool,
    rollback: bool,
    /// `(kind, name)` of the workloads an autoscaler of the plan scales.
    autoscaled: &'a std::collections::BTreeSet<(String, String)>,
    /// The app's live objects, one list per kind and namespace.
    listed: &'a super::listed::Listed,
    /// `--rotate`, resolved: the generated keys made again.
    rotations: &'a super::rotate::Rotations,
}
