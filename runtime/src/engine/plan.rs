//! Planning: what applying the app would change, field by field, from server-side-apply dry runs
//! compared with the live objects. Read-only: GETs and `dryRun=All` patches, never a write.

use super::diff::{Change, diff};
use super::error::EngineError;
use super::hash::digest;
use super::resources::{Resources, Served, api_for};
use super::secrets::{materialize, redact};
use super::target::Connection;
use crate::render;
use futures::{StreamExt, stream};
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use piceli_core::model::App;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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

/// What a plan does to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")] // the same names as [`ActionKind::as_str`] (a test keeps them equal)
pub enum ActionKind {
    /// The object does not exist.
    Create,
    /// It exists and differs.
    Update,
    /// It exists and applying would change nothing.
    Unchanged,
    /// An earlier release owned it and the app no longer declares it.
    Delete,
    /// It exists, is not ours, and `--adopt` takes it over.
    Adopt,
    /// A Namespace that exists and is not the app's (a platform team made it): used as it is — never
    /// written, adopted, labelled or deleted; apply only checks it still exists (same UID).
    Use,
    /// It exists, is ours, and a field that cannot change in place changes (a Deployment's selector, a
    /// StatefulSet's volumeClaimTemplates, a finished Job's pod template, …): apply deletes it (with the
    /// action's `propagation`) and creates it again. The action's `reason` says which field and why.
    Replace,
}

/// What the plan saw of a live object; apply refuses if it changed. A change of status alone (controllers
/// update it all the time) changes the resourceVersion but not `content`, and is not a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// The object's UID.
    pub uid: String,
    /// Its resourceVersion.
    pub resource_version: String,
    /// Digest of the object without status and server-managed metadata (secret values as digests).
    pub content: String,
}

/// The digest a precondition compares: the object without status and server-managed metadata.
pub fn content_digest(live: &Value, key: &[u8; 32]) -> String {
    if live.get("kind").and_then(Value::as_str) == Some("Secret") {
        // `normalize` first: it drops managedFields and status before `redact` copies the object (the
        // two touch disjoint fields, so the order does not change the digest).
        super::hash::digest(&redact(&super::diff::normalize(live), key))
    } else {
        // Nothing to redact: the same digest, without copying the object.
        super::diff::normalized_digest(live)
    }
}

/// One object's action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// apiVersion.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// kind.
    pub kind: String,
    /// Namespace (namespaced kinds).
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// What happens.
    pub action: ActionKind,
    /// Apply order: lower first; deletions run last, highest level first.
    pub level: u32,
    /// Field changes (secret values as keyed digests).
    pub diff: Vec<Change>,
    /// The live object as the plan saw it (`None`: it must not exist).
    pub precondition: Option<Precondition>,
    /// Digest of the desired object (secret values as digests); `None` for deletions.
    pub desired_digest: Option<String>,
    /// Fields taken over from other field managers (`plan --take-ownership`): the write uses force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub take: Vec<super::conflicts::Taken>,
    /// Why the object is replaced rather than updated ([`ActionKind::Replace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How a replace deletes the old object (`Orphan` for a StatefulSet: its pods and claims stay);
    /// `None` for other actions (and plans made before it was recorded: `Background`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation: Option<super::replace::Propagation>,
    /// The Helm release that claims the live object (`meta.helm.sh/release-name`), and whether the plan
    /// removes the claim (`--forget-helm-release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<super::helm::HelmClaim>,
    /// For a workload whose pod template changes: that its pods are replaced, in words (and which labels
    /// they gain, as when a takeover adds Piceli's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<String>,
}

impl ActionKind {
    /// The name plans, the journal and JSON output use (`create`, `update`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Create => "create",
            ActionKind::Update => "update",
            ActionKind::Unchanged => "unchanged",
            ActionKind::Delete => "delete",
            ActionKind::Adopt => "adopt",
            ActionKind::Use => "use",
            ActionKind::Replace => "replace",
        }
    }
}

impl Action {
    /// `Kind/name` or `Kind/namespace/name`.
    pub fn key(&self) -> String {
        self.object_key().to_string()
    }
    /// The object's identity.
    pub fn object_key(&self) -> super::key::ObjectKey {
        super::key::ObjectKey::new(&self.kind, self.namespace.as_deref(), &self.name)
    }
    /// Whether applying it writes anything.
    pub fn changes(&self) -> bool {
        !matches!(self.action, ActionKind::Unchanged | ActionKind::Use)
    }
}

/// A plan: the target it was made for, every action, and the hash that approves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Format version.
    pub version: u32,
    /// The app.
    pub app: String,
    /// The target.
    pub target: String,
    /// The API server.
    pub server: String,
    /// The target namespace.
    pub namespace: String,
    /// Its UID when it exists (identifies the cluster with the server URL).
    pub namespace_uid: Option<String>,
    /// Actions in apply order.
    pub actions: Vec<Action>,
    /// The desired objects, secret values as keyed digests: what apply writes (secrets are filled in
    /// again from their sources, and must match their digests).
    pub objects: Vec<Value>,
    /// The release this plan restores, for a rollback plan.
    pub rollback_of: Option<u64>,
    /// The `external` objects the app refers to, as the plan found them (apply requires the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<super::externals::Requirement>,
    /// The Helm releases that claim objects of the plan (their bookkeeping, left alone unless forgotten).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helm: Vec<super::helm::HelmRelease>,
    /// blake3 of everything above, canonical.
    pub hash: String,
}

impl Plan {
    /// The hash of the plan's content (everything but `hash`).
    pub fn compute_hash(&self) -> String {
        // The plan's canonical form without `hash`: everything but the objects goes through a small
        // value; the objects (most of the bytes) are written from where they are, not copied. Every
        // field is named here (no `..`), so a new field cannot be left out of the hash unnoticed.
        let Plan {
            version,
            app,
            target,
            server,
            namespace,
            namespace_uid,
            actions,
            objects,
            rollback_of,
            requires,
            helm,
            hash: _,
        } = self;
        let head = serde_json::to_value(PlanHead {
            version: *version,
            app,
            target,
            server,
            namespace,
            namespace_uid,
            actions,
            rollback_of: *rollback_of,
            requires,
            helm,
        })
        .unwrap_or(Value::Null);
        match head.as_object() {
            Some(head) => super::hash::digest_with(head, "objects", objects),
            None => digest(&head),
        }
    }
    /// Whether anything would be written.
    pub fn has_changes(&self) -> bool {
        self.actions.iter().any(Action::changes)
    }
}

/// The fields of a [`Plan`] other than `objects` and `hash`, named as the plan names them.
#[derive(Serialize)]
struct PlanHead<'a> {
    version: u32,
    app: &'a str,
    target: &'a str,
    server: &'a str,
    namespace: &'a str,
    namespace_uid: &'a Option<String>,
    actions: &'a [Action],
    rollback_of: Option<u64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    requires: &'a [super::externals::Requirement],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    helm: &'a [super::helm::HelmRelease],
}

/// An object an earlier release applied (for pruning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// apiVersion.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// kind.
    pub kind: String,
    /// Namespace.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

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
        let served = resources.served(&conn.client, o).await?;
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
    let mut desired = desired(conn, &source.objects, &source.namespace, &resources).await?;
    let rollback = source.rollback_of.is_some();

    let ns_served = resources
        .served(
            &conn.client,
            &json!({"apiVersion": "v1", "kind": "Namespace"}),
        )
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
}

/// The workloads the plan's HorizontalPodAutoscalers scale: their replicas belong to the autoscaler.
fn autoscaled(desired: &[Desired]) -> std::collections::BTreeSet<(String, String)> {
    desired
        .iter()
        .filter(|d| d.object["kind"] == "HorizontalPodAutoscaler")
        .filter_map(|d| {
            let target = &d.object["spec"]["scaleTargetRef"];
            Some((
                target["kind"].as_str()?.to_string(),
                target["name"].as_str()?.to_string(),
            ))
        })
        .collect()
}

/// An autoscaled workload that exists keeps the replicas the autoscaler set: once another manager owns
/// `spec.replicas` the app stops sending it; until then it sends the live value (dropping a field it alone
/// owns would reset it to the default of 1).
fn leave_replicas_to_the_autoscaler(object: &mut Value, live: &Value) {
    let others_own_replicas = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["manager"] != FIELD_MANAGER)
        .any(|m| !m["fieldsV1"]["f:spec"]["f:replicas"].is_null());
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if others_own_replicas {
        spec.remove("replicas");
    } else if let Some(replicas) = live["spec"].get("replicas") {
        spec.insert("replicas".into(), replicas.clone());
    }
}

/// The live workloads and Services of the desired objects (`Some` for each of those kinds: the object, or
/// `None` when it does not exist), read before planning so their selectors can be kept.
async fn read_selecting(
    conn: &Connection,
    desired: &[Desired],
    namespace_missing: bool,
    listed: &super::listed::Listed,
) -> Result<Vec<Option<Option<Value>>>, EngineError> {
    stream::iter(desired.iter().map(|d| async move {
        let kind = d.object["kind"].as_str().unwrap_or_default();
        if !matches!(
            kind,
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Service"
        ) {
            return Ok(None);
        }
        if d.served.pending_crd || (namespace_missing && d.namespace.is_some()) {
            return Ok(Some(None));
        }
        let name = d.object["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(found) = listed.get(&d.served, d.namespace.as_deref(), name) {
            return Ok(Some(Some(found.clone())));
        }
        get_live(conn, &d.served, d.namespace.as_deref(), name)
            .await
            .map(Some)
    }))
    .buffered(CONCURRENCY)
    .collect::<Vec<Result<_, EngineError>>>()
    .await
    .into_iter()
    .collect()
}

async fn plan_one(
    on: &Planning<'_>,
    d: &mut Desired,
    read: Option<Option<Value>>,
) -> Result<Action, EngineError> {
    let (app, conn, opts, key) = (on.app, on.conn, on.opts, on.key);
    let (namespace_missing, rollback) = (on.namespace_missing, on.rollback);
    let kind = d.object["kind"].as_str().unwrap_or_default().to_string();
    let name = d.object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let api_version = d.object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // A namespaced object in a namespace that does not exist yet cannot exist either; nor can an
    // object of a CRD the plan creates.
    let live = if let Some(read) = read {
        read
    } else if d.served.pending_crd || (namespace_missing && d.namespace.is_some()) {
        None
    } else if let Some(found) = on.listed.get(&d.served, d.namespace.as_deref(), &name) {
        Some(found.clone())
    } else {
        // Not the app's (or not there): read it alone.
        get_live(conn, &d.served, d.namespace.as_deref(), &name).await?
    };
    if kind == "Secret" {
        secret_values(app, &mut d.object, live.as_ref(), rollback, &on.opts.env)?;
    }
    let desired_digest = Some(super::hash::digest(&redact(&d.object, key)));
    let mut action = Action {
        api_version,
        kind: kind.clone(),
        namespace: d.namespace.clone(),
        name: name.clone(),
        action: ActionKind::Create,
        level: d.level,
        diff: Vec::new(),
        precondition: None,
        desired_digest,
        take: Vec::new(),
        reason: None,
        propagation: None,
        helm: live
            .as_ref()
            .and_then(|l| super::helm::claim(l, &opts.forget_helm)),
        rollout: None,
    };
    let Some(live) = live else {
        // A create is dry-run too (when its namespace and kind exist), so the server validates it at
        // plan time.
        if !d.served.pending_crd && (!namespace_missing || d.namespace.is_none()) {
            dry_run(conn, d, &name, &kind, false).await?;
        }
        return Ok(action);
    };
    action.precondition = precondition(&live, key);
    if on.autoscaled.contains(&(kind.clone(), name.clone())) {
        leave_replicas_to_the_autoscaler(&mut d.object, &live);
        action.desired_digest = Some(super::hash::digest(&redact(&d.object, key)));
    }
    let adopt = !is_ours(&live, &app.name.v);
    if kind == "Namespace" && adopt && !adopting(opts, &kind, d.namespace.as_deref(), &name) {
        // The usual case on a shared cluster: the namespace is someone else's, and the app lives in it.
        action.action = ActionKind::Use;
        return Ok(action);
    }
    if adopt && !adopting(opts, &kind, d.namespace.as_deref(), &name) {
        return Err(EngineError::NotOwned { kind, name });
    }
    if !adopt
        && !opts.force_dry_run
        // Compared as they are: the values never leave memory, so no redaction (and no copy) is needed.
        && super::owned::same_as_applied(&d.object, &live, FIELD_MANAGER)
    {
        // Exactly what this app last applied, still as it left it: a dry run would change nothing.
        action.action = ActionKind::Unchanged;
        return Ok(action);
    }
    if !adopt {
        // An object of the app whose immutable fields change cannot be updated: replaced (a Job only once
        // it has finished), or refused for the kinds that hold data. Never for an object that is not the
        // app's (adopting one updates it).
        let decision = super::replace::decide(&d.object, &live, FIELD_MANAGER);
        if decision != super::replace::Decision::InPlace {
            return planned_replace(on, d, &live, decision, action).await;
        }
    }
    // A controller may write between the read and the dry run (status, annotations): compare the dry
    // run with the version it was made against, reading again when they differ.
    let mut live = live;
    let force = adopt || opts.force_dry_run;
    let (mut after, take) = match dry_run_taking(conn, d, &name, &kind, force, opts).await {
        // What the table does not know, the server refuses as immutable: the same decision.
        Err(EngineError::DryRun(message)) if !adopt => {
            let Some(fields) = super::immutable::from_server_message(&message) else {
                return Err(EngineError::DryRun(message));
            };
            let applied = super::owned::applied(&live, FIELD_MANAGER);
            let decision = super::replace::decide_for(&d.object, &live, fields, applied);
            return planned_replace(on, d, &live, decision, action).await;
        }
        other => other?,
    };
    action.take = take;
    let force = force || !action.take.is_empty();
    for _ in 0..3 {
        if after["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"] {
            break;
        }
        let Some(again) = get_live(conn, &d.served, d.namespace.as_deref(), &name).await? else {
            break;
        };
        live = again;
        action.precondition = precondition(&live, key);
        after = dry_run(conn, d, &name, &kind, force).await?;
    }
    action.diff = diff(&redact(&live, key), &redact(&after, key));
    if adopt {
        // Which fields change owner: what each other manager owns now and no longer owns after.
        action
            .take
            .extend(super::owners::taken(&live, &after, FIELD_MANAGER));
    }
    action.action = match (adopt, action.diff.is_empty()) {
        (true, _) => ActionKind::Adopt,
        (false, true) => ActionKind::Unchanged,
        (false, false) => ActionKind::Update,
    };
    action.rollout = super::selectors::rollout(&kind, &action.diff);
    Ok(action)
}

/// The action for an object whose immutable fields change ([`super::replace::decide`]): a `replace` whose
/// new object the server validated (a dry-run create) and whose diff is the live object against it, or
/// the refusal.
async fn planned_replace(
    on: &Planning<'_>,
    d: &Desired,
    live: &Value,
    decision: super::replace::Decision,
    mut action: Action,
) -> Result<Action, EngineError> {
    use super::replace::Decision;
    let (kind, name) = (action.kind.clone(), action.name.clone());
    let key = on.key;
    let named = || match &d.namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.clone(),
    };
    match decision {
        Decision::InPlace => Ok(action),
        Decision::Replace {
            fields,
            diff: applied_diff,
            propagation,
        } => {
            // The server checks the new object before apply deletes the old one.
            let created = dry_run_replacement(on.conn, d, &name, &kind).await?;
            action.action = ActionKind::Replace;
            action.reason = Some(super::replace::reason(&kind, &fields, propagation));
            action.propagation = Some(propagation);
            action.diff = match created {
                Some(created) => super::replace::replacement_diff(
                    &redact(live, key),
                    &redact(&created, key),
                    &name,
                ),
                // Values are compared as they are only for kinds without secrets.
                None if kind != "Secret" => applied_diff,
                None => Vec::new(),
            };
            Ok(action)
        }
        Decision::Running { fields } => Err(EngineError::JobRunning {
            namespace: d.namespace.clone().unwrap_or_default(),
            name,
            fields,
        }),
        Decision::Refused { fields } => Err(EngineError::ImmutableData {
            lost: super::immutable::data_lost(&kind).to_string(),
            name: named(),
            kind,
            fields,
        }),
    }
}

/// A dry run that meets field-manager conflicts: taken over when `--take-ownership` names every one of
/// the object's conflicting fields (the dry run is repeated with force, and the plan records them), else
/// reported ([`EngineError::FieldConflicts`], collected over the whole plan).
async fn dry_run_taking(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
    force: bool,
    opts: &PlanOptions,
) -> Result<(Value, Vec<super::conflicts::Taken>), EngineError> {
    match dry_run(conn, d, name, kind, force).await {
        Err(EngineError::FieldConflicts(conflicts))
            if conflicts.iter().all(|c| opts.take_ownership.takes(c)) =>
        {
            let taken = conflicts
                .into_iter()
                .map(|c| super::conflicts::Taken {
                    field: c.field,
                    from: c.manager,
                })
                .collect();
            Ok((dry_run(conn, d, name, kind, true).await?, taken))
        }
        Err(EngineError::FieldConflicts(conflicts)) => Err(EngineError::FieldConflicts(
            conflicts
                .into_iter()
                .filter(|c| !opts.take_ownership.takes(c))
                .collect(),
        )),
        other => other.map(|after| (after, Vec::new())),
    }
}

/// A server-side-apply dry run of a desired object: what the server would store.
async fn dry_run(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
    force: bool,
) -> Result<Value, EngineError> {
    let api = api_for(&conn.client, &d.served, d.namespace.as_deref());
    let mut params = PatchParams::apply(FIELD_MANAGER).dry_run();
    params.force = force;
    let body = if d.object.to_string().contains(super::secrets::TO_GENERATE) {
        // A value still to generate: the live object keeps its keys; compare without the new one.
        strip_to_generate(&d.object)
    } else {
        d.object.clone()
    };
    let result: DynamicObject = api
        .patch(name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| dry_run_error(kind, d.namespace.as_deref(), name, e))?;
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}

/// A dry-run create of the object a replace creates, so the server validates it at plan time (apply deletes
/// the old object before it creates this one); returns what the server would store. The name is still the old object's, so the create uses a
/// name generated from it (`generateName`; the name itself was validated when the old object was made).
async fn dry_run_replacement(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
) -> Result<Option<Value>, EngineError> {
    let api = api_for(&conn.client, &d.served, d.namespace.as_deref());
    let mut body = d.object.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("name");
        meta.insert("generateName".into(), Value::String(format!("{name}-")));
    }
    let object: DynamicObject = serde_json::from_value(body).map_err(|e| {
        EngineError::DryRun(format!("{kind}/{name} cannot be sent for a dry run: {e}"))
    })?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    api.create(&params, &object)
        .await
        .map(|created| serde_json::to_value(created).ok())
        .map_err(|e| dry_run_error(kind, d.namespace.as_deref(), name, e))
}

/// Fill a desired Secret's values: from the app's sources, or — restoring a release, whose values were
/// never stored — the values the cluster holds now.
pub fn secret_values(
    app: &App,
    object: &mut Value,
    live: Option<&Value>,
    rollback: bool,
    env: &super::env_file::SecretEnv,
) -> Result<(), EngineError> {
    if !rollback {
        return materialize(app, object, live, false, env);
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Some(live) = live else {
        return Err(EngineError::SecretSource {
            secret: name,
            key: "*".into(),
            reason: "it no longer exists in the cluster, and secret values are never stored, so a rollback cannot restore it".into(),
        });
    };
    if let Some(map) = object.as_object_mut() {
        map.remove("stringData");
        map.insert(
            "data".into(),
            live.get("data")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
        );
    }
    Ok(())
}

fn strip_to_generate(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(data) = out.get_mut("data").and_then(Value::as_object_mut) {
        data.retain(|_, v| v != super::secrets::TO_GENERATE);
    }
    out
}

fn dry_run_error(kind: &str, namespace: Option<&str>, name: &str, e: kube::Error) -> EngineError {
    match e {
        kube::Error::Api(s) if s.code == 409 => {
            let object = super::key::ObjectKey::new(kind, namespace, name).to_string();
            EngineError::FieldConflicts(super::conflicts::from_status(&object, &s))
        }
        kube::Error::Api(s) if s.code == 422 || s.code == 400 => {
            EngineError::DryRun(format!("{kind}/{name} is invalid: {}", s.message))
        }
        other => EngineError::cluster(format!("dry-running {kind}/{name}"), other),
    }
}

/// Deletions: objects the previous release applied that the app no longer declares, still ours, and
/// not of a protected kind.
async fn prune(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    desired: &[Desired],
    opts: &PlanOptions,
) -> Result<Vec<Action>, EngineError> {
    let mut out = Vec::new();
    // What the app still declares, as a set: a scan of every desired object per previous one made a
    // re-plan quadratic in the number of objects.
    let declared: std::collections::HashSet<(&str, &str, Option<&str>)> = desired
        .iter()
        .map(|d| {
            (
                d.object["kind"].as_str().unwrap_or_default(),
                d.object["metadata"]["name"].as_str().unwrap_or_default(),
                d.namespace.as_deref(),
            )
        })
        .collect();
    for prev in &opts.previous {
        if PROTECTED_KINDS.contains(&prev.kind.as_str()) {
            continue;
        }
        let key = (
            prev.kind.as_str(),
            prev.name.as_str(),
            prev.namespace.as_deref(),
        );
        if declared.contains(&key) {
            continue;
        }
        let probe = json!({"apiVersion": prev.api_version, "kind": prev.kind});
        let served = match resources.served(&conn.client, &probe).await {
            Ok(s) => s,
            Err(EngineError::UnknownKind { .. }) => continue,
            Err(e) => return Err(e),
        };
        let Some(live) = get_live(conn, &served, prev.namespace.as_deref(), &prev.name).await?
        else {
            continue;
        };
        if !is_ours(&live, &app.name.v) {
            continue;
        }
        out.push(Action {
            api_version: prev.api_version.clone(),
            kind: prev.kind.clone(),
            namespace: prev.namespace.clone(),
            name: prev.name.clone(),
            action: ActionKind::Delete,
            level: level(&prev.kind),
            diff: Vec::new(),
            precondition: precondition(&live, &opts.digest_key),
            desired_digest: None,
            take: Vec::new(),
            reason: None,
            propagation: None,
            helm: None,
            rollout: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod action_kind_tests {
    use super::ActionKind;

    #[test]
    fn stored_names_are_the_serde_names() {
        use ActionKind::*;
        for k in [Create, Update, Unchanged, Delete, Adopt, Use, Replace] {
            assert_eq!(serde_json::to_value(k).expect("json"), k.as_str());
        }
    }
}

#[cfg(test)]
mod hash_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_plan_hash_is_the_digest_of_the_whole_plan_without_its_hash() {
        let required = super::super::externals::Requirement {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: "hello".into(),
            name: "tls".into(),
            found: true,
            uid: Some("u".into()),
        };
        for requires in [Vec::new(), vec![required]] {
            let plan = Plan {
                version: 1,
                app: "hello".into(),
                target: "local".into(),
                server: "https://127.0.0.1:1".into(),
                namespace: "hello".into(),
                namespace_uid: None,
                actions: Vec::new(),
                objects: vec![json!({"kind": "ConfigMap", "data": {"b": "1", "a": "2"}})],
                rollback_of: Some(3),
                requires,
                helm: Vec::new(),
                hash: "ignored".into(),
            };
            let mut whole = serde_json::to_value(&plan).expect("json");
            whole.as_object_mut().expect("an object").remove("hash");
            assert_eq!(plan.compute_hash(), digest(&whole));
        }
    }
}
