//! Applying exactly an approved plan: preconditions first (nothing is written when one fails), then
//! server-side apply in dependency order, every step journaled before and after it runs.

use super::error::EngineError;
use super::lock::LockSlot;
use super::plan::secret_values;
use super::plan::{
    Action, ActionKind, Desired, FIELD_MANAGER, Plan, PlanOptions, desired, is_ours,
};
use super::resources::{Resources, api_for};
use super::secrets::{materialize, redact};
use super::target::Connection;
use crate::journal::{
    Journal, PlannedStep, Release, ReleaseId, ReleaseKind, ReleaseState, StepOutcome, StepState,
};
use futures::{StreamExt, stream};
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions};
use piceli_core::model::App;
use serde_json::Value;
use std::collections::BTreeMap;

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The release number journaled (none when the plan changed nothing).
    pub release: Option<u64>,
    /// Objects written (created, updated, adopted) and deleted.
    pub written: usize,
    /// Objects left as they were.
    pub unchanged: usize,
}

/// A test-only hook: called at each point where a kill matters (after the preconditions are checked, after
/// the release is journaled, after a step is marked started, after its cluster write, after it is marked
/// finished, after the release is marked succeeded and before the cluster's record) with a description;
/// returning `false` makes the apply stop right there, as if the process were killed. Only with the
/// `fault-injection` feature (test crates).
#[cfg(feature = "fault-injection")]
pub type FaultHook = dyn Fn(&str) -> bool + Send + Sync;

/// Without the `fault-injection` feature no hook can exist: the type has no values.
#[cfg(not(feature = "fault-injection"))]
pub enum FaultHook {}

/// Stop here if the fault hook says so.
#[cfg(feature = "fault-injection")]
pub(super) fn checkpoint(hook: Option<&FaultHook>, at: &str) -> Result<(), EngineError> {
    match hook {
        Some(h) if !h(at) => Err(EngineError::Killed(at.to_string())),
        _ => Ok(()),
    }
}

/// No hook without the `fault-injection` feature.
#[cfg(not(feature = "fault-injection"))]
pub(super) fn checkpoint(hook: Option<&FaultHook>, _at: &str) -> Result<(), EngineError> {
    match hook {
        Some(never) => match *never {},
        None => Ok(()),
    }
}

/// Execute `plan` (already verified against its approved hash by the session), holding `lock`.
pub async fn apply(
    app: &App,
    conn: &Connection,
    journal: &Journal,
    plan: &Plan,
    plan_opts: &PlanOptions,
    hook: Option<&FaultHook>,
    lock: Option<&LockSlot>,
) -> Result<Applied, EngineError> {
    let hash = plan.hash.as_str();
    if plan.server != conn.server {
        return Err(EngineError::Precondition(format!(
            "the plan was made against {}, this is {}",
            plan.server, conn.server
        )));
    }
    // The lock first: the preconditions below hold only while no other apply writes. A first apply
    // creates its namespace to have somewhere to take it.
    let mut created_namespace = false;
    if let Some(lock) = lock {
        lock.ensure().await?;
        created_namespace = super::first_apply::lock_first_apply(conn, plan, &app.name.v, lock)
            .await?
            || super::first_apply::created_by_this_plan(conn, plan, &app.name.v).await?;
    }
    // Exactly the planned objects (secret values filled in again, and checked against their digests).
    let resources = conn.resources.clone();
    let mut wanted = desired(conn, &plan.objects, &plan.namespace, &resources).await?;
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, d) in wanted.iter().enumerate() {
        by_key.insert(key_of(d), i);
    }
    // Every precondition, before any write: the `external` objects as the plan found them, then each action's.
    super::externals::recheck(conn, &resources, &plan.requires).await?;
    let rollback = plan.rollback_of.is_some();
    // The resourceVersion each write carries: what the precondition check just saw.
    let mut rvs: BTreeMap<String, String> = BTreeMap::new();
    for a in &plan.actions {
        if created_namespace && a.kind == "Namespace" && a.name == plan.namespace {
            // Its precondition was the create this apply just made under the lock.
            continue;
        }
        check_precondition(
            app,
            conn,
            &resources,
            a,
            &mut wanted,
            &by_key,
            plan_opts,
            rollback,
            &mut rvs,
        )
        .await?;
    }
    let changing: Vec<&Action> = plan.actions.iter().filter(|a| a.changes()).collect();
    let unchanged = plan.actions.len() - changing.len();
    if changing.is_empty() {
        return Ok(Applied {
            release: None,
            written: 0,
            unchanged,
        });
    }
    let steps: Vec<PlannedStep> = changing
        .iter()
        .map(|a| PlannedStep {
            kind: a.kind.clone(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            action: a.action.as_str().to_string(),
            level: a.level,
            desired_digest: a.desired_digest.clone(),
        })
        .collect();
    checkpoint(hook, "preconditions checked")?;
    let release = journal.begin_release(
        hash,
        if rollback {
            ReleaseKind::Rollback
        } else {
            ReleaseKind::Apply
        },
        &steps,
    )?;
    let number = journal.release(release).ok().flatten().map(|r| r.number);
    checkpoint(hook, "release journaled")?;
    let todo: Vec<(u32, &Action)> = changing
        .iter()
        .enumerate()
        .map(|(i, a)| (i as u32, *a))
        .collect();
    let step = Step {
        conn,
        journal,
        release,
        resources: &resources,
        key: &plan_opts.digest_key,
        optimistic: true,
        rvs,
        hook,
        lock,
    };
    run_levels(&step, &todo, &wanted, &by_key).await?;
    Ok(Applied {
        release: number,
        written: changing.len(),
        unchanged,
    })
}

/// Mark a release whose every step is done `succeeded` — after readiness (and, for `deploy`, its checks)
/// — and record it in the cluster. Until then it stays `running`: `resume` waits for it again.
pub async fn complete(
    conn: &Connection,
    journal: &Journal,
    plan: &Plan,
    release: ReleaseId,
    hook: Option<&FaultHook>,
) -> Result<(), EngineError> {
    journal.finish_release(release, ReleaseState::Succeeded)?;
    checkpoint(hook, "release finished")?;
    let finished = journal.release(release)?;
    let at = finished
        .as_ref()
        .and_then(|r| r.finished_at.clone())
        .unwrap_or_default();
    super::record::write(conn, plan, release.0, &at).await
}

fn key_of(d: &Desired) -> String {
    super::key::ObjectKey::of(&d.object, d.namespace.as_deref()).to_string()
}

#[allow(clippy::too_many_arguments)] // one call site; the arguments are the apply run's state
async fn check_precondition(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    a: &Action,
    wanted: &mut [Desired],
    by_key: &BTreeMap<String, usize>,
    plan_opts: &PlanOptions,
    rollback: bool,
    rvs: &mut BTreeMap<String, String>,
) -> Result<(), EngineError> {
    let probe = serde_json::json!({"apiVersion": a.api_version, "kind": a.kind});
    let served = resources.served(&conn.client, &probe).await?;
    let live = super::resources::read(&conn.client, &served, a.namespace.as_deref(), &a.name)
        .await
        .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?;
    let current_rv = live.as_ref().and_then(|l| {
        l["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    });
    let holds = match (&a.precondition, &live) {
        (None, None) => true,
        // Used as it is: only that it is still the same object.
        (Some(p), Some(l)) if a.action == ActionKind::Use => {
            l["metadata"]["uid"].as_str() == Some(p.uid.as_str())
        }
        (Some(p), Some(l)) => {
            // The resourceVersion alone proves it cheaply; else the content decides.
            (l["metadata"]["uid"].as_str() == Some(p.uid.as_str())
                && current_rv.as_deref() == Some(p.resource_version.as_str()))
                || as_planned(p, l, &plan_opts.digest_key)
        }
        _ => false,
    };
    if !holds {
        let what = match (&a.precondition, &live) {
            (None, Some(l)) if is_ours(l, &app.name.v) => {
                "was created by an apply of this app (this plan was already applied, or another plan was)"
            }
            (None, Some(_)) => "was created by someone else",
            (Some(_), None) => "was deleted",
            _ => "was changed",
        };
        return Err(EngineError::Precondition(format!(
            "{} {what} since the plan; nothing was written",
            a.key()
        )));
    }
    if let Some(rv) = current_rv {
        rvs.insert(a.key(), rv);
    }
    if matches!(a.action, ActionKind::Delete | ActionKind::Use) {
        return Ok(());
    }
    let Some(&w) = by_key.get(&a.key()) else {
        return Err(EngineError::Stale(format!(
            "the plan has no object for {}",
            a.key()
        )));
    };
    let d = &mut wanted[w];
    if a.kind == "Secret" {
        // Secret values are never stored: read them again, and they must be what was planned.
        secret_values(app, &mut d.object, live.as_ref(), rollback, &plan_opts.env)?;
        let now = super::hash::digest(&redact(&d.object, &plan_opts.digest_key));
        if Some(now) != a.desired_digest {
            return Err(EngineError::Stale(format!(
                "the values of {} changed since the plan",
                a.key()
            )));
        }
        if !rollback {
            materialize(app, &mut d.object, live.as_ref(), true, &plan_opts.env)?;
        }
    }
    if a.action != ActionKind::Adopt && live.as_ref().is_some_and(|l| !is_ours(l, &app.name.v)) {
        return Err(EngineError::NotOwned {
            kind: a.kind.clone(),
            name: a.name.clone(),
        });
    }
    Ok(())
}

/// Run steps level by level (objects of a level in parallel), honouring `stop` between levels. The
/// release stays `running` (see [`complete`]); a write the server rejected fails it.
async fn run_levels(
    step: &Step<'_>,
    todo: &[(u32, &Action)],
    wanted: &[Desired],
    by_key: &BTreeMap<String, usize>,
) -> Result<(), EngineError> {
    let journal = step.journal;
    let mut i = 0;
    while i < todo.len() {
        if let Some(lock) = step.lock {
            lock.ensure().await?;
        }
        if journal.stop_requested().unwrap_or(false) {
            let _ = journal.clear_stop();
            // The release stays `running`: `resume` continues it.
            return Err(EngineError::Stopped(
                "stopped on request between steps; `resume` continues".into(),
            ));
        }
        let level = (todo[i].1.action == ActionKind::Delete, todo[i].1.level);
        let mut batch = Vec::new();
        while i < todo.len() && (todo[i].1.action == ActionKind::Delete, todo[i].1.level) == level {
            batch.push(todo[i]);
            i += 1;
        }
        // A CustomResourceDefinition this level writes must be established before a later level writes
        // its custom resources (kube-apiserver serves them only then).
        let crds: Vec<&str> = batch
            .iter()
            .filter(|(_, a)| a.kind == "CustomResourceDefinition" && a.action != ActionKind::Delete)
            .map(|(_, a)| a.name.as_str())
            .collect();
        let results: Vec<Result<(), EngineError>> =
            stream::iter(batch.into_iter().map(|(idx, a)| {
                let d = by_key.get(&a.key()).map(|&w| &wanted[w]);
                async move { run_step(step, idx, a, d).await }
            }))
            .buffer_unordered(16)
            .collect()
            .await;
        if let Some(e) = results.into_iter().find_map(Result::err) {
            // Only a write the server rejected fails the release; an interruption (a kill, a lost
            // connection, a lost lock, the journal) leaves it `running` for `resume`.
            if matches!(e, EngineError::Apply(_)) {
                let _ = journal.finish_release(step.release, ReleaseState::Failed);
            }
            return Err(e);
        }
        if i < todo.len() {
            for name in crds {
                super::ready::wait_established(step.conn, step.resources, name).await?;
            }
        }
    }
    Ok(())
}

/// Continue the release a killed or stopped apply left `running`: every step not done runs again.
/// Server-side apply of the same object is idempotent, so a write that may or may not have landed is
/// simply applied again (no change when it had landed); a deletion whose object is gone is done.
#[allow(clippy::too_many_arguments)] // one call site; the arguments are the resumed run's state
pub async fn resume(
    app: &App,
    conn: &Connection,
    journal: &Journal,
    release: &Release,
    plan: &Plan,
    plan_opts: &PlanOptions,
    hook: Option<&FaultHook>,
    lock: Option<&LockSlot>,
) -> Result<Applied, EngineError> {
    if let Some(lock) = lock {
        lock.ensure().await?;
    }
    let resources = conn.resources.clone();
    let mut wanted = desired(conn, &plan.objects, &plan.namespace, &resources).await?;
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, d) in wanted.iter().enumerate() {
        by_key.insert(key_of(d), i);
    }
    let steps = journal.steps(release.id)?;
    let mut todo = Vec::new();
    let actions_by_key: std::collections::HashMap<String, &Action> =
        plan.actions.iter().map(|a| (a.key(), a)).collect();
    for s in &steps {
        if s.state == StepState::Done {
            continue;
        }
        let key = super::key::ObjectKey::new(&s.kind, s.namespace.as_deref(), &s.name).to_string();
        let Some(a) = actions_by_key.get(&key).copied() else {
            return Err(EngineError::Stale(format!(
                "release {} has a step for {key} its plan does not",
                release.number
            )));
        };
        if a.action != ActionKind::Delete {
            let Some(&w) = by_key.get(&key) else {
                return Err(EngineError::Stale(format!(
                    "the app no longer declares {key}"
                )));
            };
            prepare_resumed(app, conn, &resources, a, &mut wanted[w], plan_opts).await?;
        }
        todo.push((s.index, a));
    }
    let step = Step {
        conn,
        journal,
        release: release.id,
        resources: &resources,
        key: &plan_opts.digest_key,
        optimistic: false,
        rvs: BTreeMap::new(),
        hook,
        lock,
    };
    let written = todo.len();
    run_levels(&step, &todo, &wanted, &by_key).await?;
    Ok(Applied {
        release: Some(release.number),
        written,
        unchanged: 0,
    })
}

/// Check a resumed object still renders as planned, and fill in its secret values (a generated value the
/// interrupted run already wrote is kept).
async fn prepare_resumed(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    a: &Action,
    d: &mut Desired,
    plan_opts: &PlanOptions,
) -> Result<(), EngineError> {
    let (key, env) = (&plan_opts.digest_key, &*plan_opts.env);
    let live = if a.kind == "Secret" {
        let served = resources.served(&conn.client, &d.object).await?;
        super::resources::read(&conn.client, &served, d.namespace.as_deref(), &a.name)
            .await
            .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?
    } else {
        None
    };
    let mut planned = d.object.clone();
    if a.kind == "Secret" {
        // As planned: generated values that did not exist then are placeholders.
        materialize(app, &mut planned, None, false, env)?;
        let now = super::hash::digest(&redact(&planned, key));
        let with_live = {
            let mut o = d.object.clone();
            materialize(app, &mut o, live.as_ref(), false, env)?;
            super::hash::digest(&redact(&o, key))
        };
        if Some(&now) != a.desired_digest.as_ref() && Some(&with_live) != a.desired_digest.as_ref()
        {
            return Err(EngineError::Stale(format!(
                "{} renders differently than when it was planned",
                a.key()
            )));
        }
        materialize(app, &mut d.object, live.as_ref(), true, env)?;
        return Ok(());
    }
    let now = super::hash::digest(&redact(&planned, key));
    if Some(now) != a.desired_digest {
        return Err(EngineError::Stale(format!(
            "{} renders differently than when it was planned",
            a.key()
        )));
    }
    Ok(())
}

/// What every step of one run shares.
struct Step<'a> {
    conn: &'a Connection,
    journal: &'a Journal,
    release: ReleaseId,
    resources: &'a Resources,
    key: &'a [u8; 32],
    /// Send the checked resourceVersion with each write (a first run); a resume cannot (its own
    /// interrupted write may have changed it).
    optimistic: bool,
    /// The resourceVersion each object had when the preconditions were checked.
    rvs: BTreeMap<String, String>,
    hook: Option<&'a FaultHook>,
    /// The cluster lock, checked before every level.
    lock: Option<&'a LockSlot>,
}

/// How often a write that failed for a reason that may pass is tried in all, and the first pause.
const WRITE_ATTEMPTS: u32 = 5;
const FIRST_BACKOFF: std::time::Duration = std::time::Duration::from_millis(250);

/// Whether a failed request may succeed when sent again: the connection failed, or the server was
/// overloaded or broken (5xx, 429). Anything else is the server rejecting the request.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code >= 500 || s.code == 429,
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => true,
        _ => false,
    }
}

/// Why one write failed.
enum WriteError {
    /// The server rejected it.
    Rejected(String),
    /// It kept failing for a reason that may pass.
    Transient(String),
}

/// One step in its `apply_step` span (step index, action, object), its outcome logged at debug.
async fn run_step(
    step: &Step<'_>,
    index: u32,
    a: &Action,
    d: Option<&Desired>,
) -> Result<(), EngineError> {
    use tracing::Instrument;
    let span = tracing::info_span!("apply_step", step = index, action = a.action.as_str(), object = %a.key());
    let result = write_step(step, index, a, d).instrument(span.clone()).await;
    span.in_scope(|| match &result {
        Ok(()) => tracing::debug!("step done"),
        Err(e) => tracing::debug!(error = %e, "step failed"),
    });
    result
}

async fn write_step(
    step: &Step<'_>,
    index: u32,
    a: &Action,
    d: Option<&Desired>,
) -> Result<(), EngineError> {
    let journal = step.journal;
    journal.step_started(step.release, index)?;
    checkpoint(step.hook, &format!("step {index} started"))?;
    let probe = serde_json::json!({"apiVersion": a.api_version, "kind": a.kind});
    let served = step.resources.served(&step.conn.client, &probe).await?;
    let api = api_for(&step.conn.client, &served, a.namespace.as_deref());
    let write = match (a.action, d) {
        (ActionKind::Delete, _) => Some(Write::Delete),
        (_, Some(d)) => Some(Write::Apply(d)),
        (_, None) => None,
    };
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1;
    let replace = a.action == ActionKind::Replace;
    // A replace deletes the planned object first (and waits until it is gone); the apply below then
    // creates the new one. A resumed replace finds it deleted (it creates) or created again (the apply
    // changes nothing).
    let cleared = if replace {
        let cleared = clear_for_replace(step, &api, &served, a).await;
        if cleared.is_ok() {
            checkpoint(step.hook, &format!("step {index} deleted"))?;
        }
        cleared
    } else {
        Ok(())
    };
    // The resourceVersion an optimistic write carries: the checked one, or the one a conflict re-read
    // (none for the object a replace creates).
    let mut rv = if replace {
        None
    } else {
        step.rvs.get(&a.key()).cloned()
    };
    let mut conflicts = 0;
    let mut cleared = Some(cleared);
    let result = loop {
        if let Some(Err(e)) = cleared.take() {
            // The delete half of a replace failed: nothing is created.
            break Err(e);
        }
        let Some(write) = &write else {
            break Err(WriteError::Rejected(format!(
                "{} has no desired object",
                a.key()
            )));
        };
        match write_once(step, &api, a, write, attempt, rv.as_deref()).await {
            // Someone wrote the object between the check and this write — a controller updating its
            // status, usually. The write goes ahead only if what the plan saw still holds.
            Err(kube::Error::Api(s))
                if s.code == 409
                    && step.optimistic
                    && attempt == 1
                    && a.precondition.is_some()
                    && !replace =>
            {
                conflicts += 1;
                match unchanged_since_plan(step, &served, a).await {
                    Some(now) if conflicts <= CONFLICT_RETRIES => rv = Some(now),
                    Some(_) => {
                        break Err(WriteError::Transient(format!(
                            "the object kept changing while it was written ({conflicts} conflicts)"
                        )));
                    }
                    None => {
                        break Err(WriteError::Rejected(
                            "the object was changed since the plan (the server refused the write with \
                             HTTP 409); nothing of it was written: plan again"
                                .to_string(),
                        ));
                    }
                }
            }
            Err(kube_error) if is_transient(&kube_error) => {
                if attempt >= WRITE_ATTEMPTS {
                    break Err(WriteError::Transient(format!(
                        "{} (after {attempt} attempts)",
                        super::cluster_error::classify(&kube_error).1
                    )));
                }
                tracing::debug!(
                    attempt,
                    error = %super::cluster_error::classify(&kube_error).1,
                    "the write failed for a reason that may pass; trying again"
                );
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(4));
                attempt += 1;
            }
            Err(kube_error) => {
                // The server's words, never a Debug dump of its Status.
                break Err(WriteError::Rejected(
                    super::cluster_error::classify(&kube_error).1,
                ));
            }
            Ok(outcome) => break Ok(outcome),
        }
    };
    checkpoint(step.hook, &format!("step {index} written"))?;
    let outcome = match &result {
        Ok(o) => o.clone(),
        Err(WriteError::Rejected(e) | WriteError::Transient(e)) => StepOutcome {
            ok: false,
            detail: e.clone(),
            uid: None,
            resource_version: None,
            digest: None,
        },
    };
    journal.step_finished(step.release, index, &outcome)?;
    checkpoint(step.hook, &format!("step {index} finished"))?;
    match result {
        Ok(_) => Ok(()),
        Err(WriteError::Rejected(e)) => Err(EngineError::Apply(format!("{}: {e}", a.key()))),
        Err(WriteError::Transient(e)) => Err(EngineError::Interrupted(format!(
            "writing {}: {e}",
            a.key()
        ))),
    }
}

/// How long a replace waits for the object it deleted to be gone (finalizers may hold it).
const REPLACE_GONE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The first half of a replace: delete the object the plan saw (its uid) with `propagationPolicy:
/// Background`, then wait until it is gone. Background, because the object is a finished Job: its pods
/// no longer run, so nothing of the old and the new Job runs at once, and the new Job need not wait
/// for the garbage collector to delete every old pod (Foreground keeps the Job, and so its name, until
/// then). Without a policy, a batch/v1 Job's pods would be orphaned. Done already when the object is
/// missing, or another object of that name is there (the interrupted run created it).
async fn clear_for_replace(
    step: &Step<'_>,
    api: &kube::Api<DynamicObject>,
    served: &super::resources::Served,
    a: &Action,
) -> Result<(), WriteError> {
    let Some(uid) = a.precondition.as_ref().map(|p| p.uid.clone()) else {
        return Err(WriteError::Rejected(format!(
            "{} has no planned object to replace",
            a.key()
        )));
    };
    // The checked resourceVersion on a first run (a resume cannot know it).
    let mut rv = if step.optimistic {
        step.rvs.get(&a.key()).cloned()
    } else {
        None
    };
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1;
    let mut conflicts = 0;
    let mut retry =
        |e: &kube::Error, attempt: &mut u32| -> Result<std::time::Duration, WriteError> {
            if !is_transient(e) {
                return Err(WriteError::Rejected(super::cluster_error::classify(e).1));
            }
            if *attempt >= WRITE_ATTEMPTS {
                return Err(WriteError::Transient(format!(
                    "{} (after {attempt} attempts)",
                    super::cluster_error::classify(e).1
                )));
            }
            *attempt += 1;
            let pause = backoff;
            backoff = (backoff * 2).min(std::time::Duration::from_secs(4));
            Ok(pause)
        };
    loop {
        let live = match api.get_opt(&a.name).await {
            Ok(live) => live,
            Err(e) => {
                tokio::time::sleep(retry(&e, &mut attempt)?).await;
                continue;
            }
        };
        match live {
            None => return Ok(()),
            Some(o) if o.metadata.uid.as_deref() != Some(uid.as_str()) => return Ok(()),
            Some(o) if o.metadata.deletion_timestamp.is_some() => break,
            Some(_) => {}
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.clone()),
                resource_version: rv.clone(),
            }),
            ..DeleteParams::background()
        };
        match api.delete(&a.name, &params).await {
            Ok(_) => break,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            // The uid precondition failed (another object now: the loop sees it), or the resourceVersion
            // did: a controller wrote (status); the delete goes ahead only if what the plan saw holds.
            Err(kube::Error::Api(s)) if s.code == 409 => {
                conflicts += 1;
                if conflicts > CONFLICT_RETRIES {
                    return Err(WriteError::Transient(format!(
                        "the object kept changing while it was deleted ({conflicts} conflicts)"
                    )));
                }
                if rv.is_some() {
                    match unchanged_since_plan(step, served, a).await {
                        Some(now) => rv = Some(now),
                        None => {
                            return Err(WriteError::Rejected(
                                "the object was changed since the plan (the server refused the delete \
                                 with HTTP 409); nothing of it was written: plan again"
                                    .to_string(),
                            ));
                        }
                    }
                }
            }
            Err(e) => tokio::time::sleep(retry(&e, &mut attempt)?).await,
        }
    }
    // Gone when it is missing or another object has its name.
    let deadline = tokio::time::Instant::now() + REPLACE_GONE_WAIT;
    loop {
        match api.get_opt(&a.name).await {
            Ok(None) => return Ok(()),
            Ok(Some(o)) if o.metadata.uid.as_deref() != Some(uid.as_str()) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(WriteError::Rejected(super::cluster_error::classify(&e).1)),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(WriteError::Transient(format!(
                "{} was deleted but is still there after {}s (finalizers?)",
                a.key(),
                REPLACE_GONE_WAIT.as_secs()
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// What a step writes.
enum Write<'a> {
    /// Delete the object.
    Delete,
    /// Server-side apply this object.
    Apply(&'a Desired),
}

/// How often a write that conflicted with a change that left the plan's precondition holding (a status
/// update) is sent again with the new resourceVersion.
const CONFLICT_RETRIES: u32 = 3;

/// The object's resourceVersion now, if it is still what the plan saw: the same object (uid) with the same
/// content (status and server-managed metadata aside). `None` when it changed, is gone or cannot be read.
async fn unchanged_since_plan(
    step: &Step<'_>,
    served: &super::resources::Served,
    a: &Action,
) -> Option<String> {
    let p = a.precondition.as_ref()?;
    let live = super::resources::read(&step.conn.client, served, a.namespace.as_deref(), &a.name)
        .await
        .ok()??;
    as_planned(p, &live, step.key).then(|| {
        live["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    })?
}

/// Whether a live object is still what the plan saw: the same object (uid) with the same content (status
/// and server-managed metadata aside, so a controller's status update is no change).
fn as_planned(p: &super::plan::Precondition, live: &Value, key: &[u8; 32]) -> bool {
    live["metadata"]["uid"].as_str() == Some(p.uid.as_str())
        && super::plan::content_digest(live, key) == p.content
}

/// One attempt at a step's write. A retry (`attempt > 1`) sends no resourceVersion and takes a missing
/// object as deleted: the earlier attempt may have landed with its answer lost. `rv` is the
/// resourceVersion an optimistic first attempt carries.
async fn write_once(
    step: &Step<'_>,
    api: &kube::Api<DynamicObject>,
    a: &Action,
    write: &Write<'_>,
    attempt: u32,
    rv: Option<&str>,
) -> Result<StepOutcome, kube::Error> {
    let optimistic = step.optimistic && attempt == 1;
    match write {
        Write::Delete => {
            let pre = a.precondition.as_ref();
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: pre.map(|p| p.uid.clone()),
                    resource_version: if optimistic {
                        rv.map(str::to_string)
                    } else {
                        None
                    },
                }),
                ..DeleteParams::background()
            };
            let done = StepOutcome {
                ok: true,
                detail: "deleted".into(),
                uid: None,
                resource_version: None,
                digest: None,
            };
            match api.delete(&a.name, &params).await {
                Ok(_) => Ok(done),
                Err(kube::Error::Api(s)) if s.code == 404 && !optimistic => Ok(done),
                Err(e) => Err(e),
            }
        }
        Write::Apply(d) => {
            let mut body = d.object.clone();
            if optimistic
                && let (Some(rv), Some(meta)) =
                    (rv, body.get_mut("metadata").and_then(Value::as_object_mut))
            {
                // Optimistic concurrency: the write fails if the object changed since the check.
                meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
            }
            let mut params = PatchParams::apply(FIELD_MANAGER);
            // Adopting, or taking fields over that the approved plan lists (`--take-ownership`).
            params.force = a.action == ActionKind::Adopt || !a.take.is_empty();
            let mut written: DynamicObject =
                api.patch(&a.name, &params, &Patch::Apply(&body)).await?;
            if a.action == ActionKind::Adopt {
                written = super::owners::release_old_owners(api, &a.name, written).await?;
            }
            if a.helm.as_ref().is_some_and(|c| c.forget) {
                // `--forget-helm-release`: Helm's annotations go with the object's own write.
                written = super::helm::forget_claim(api, &a.name, written).await?;
            }
            Ok(written).map(|o: DynamicObject| StepOutcome {
                ok: true,
                detail: a.action.as_str().to_string(),
                uid: o.metadata.uid.clone(),
                resource_version: o.metadata.resource_version.clone(),
                digest: Some(super::hash::digest(&redact(&d.object, step.key))),
            })
        }
    }
}
