//! Applying exactly an approved plan: preconditions first (nothing is written when one fails), then server-
//! side apply in dependency order, every step journaled before and after it runs.

use super::error::EngineError;
use super::lock::LockSlot;
use super::plan::secret_values;
use super::plan::{
    Action, ActionKind, Desired, FIELD_MANAGER, Plan, PlanOptions, desired, is_ours,
};
use super::resources::{Resources, api_for};
use super::secrets::{Fill, materialize, redact};
use super::target::Connection;
use crate::journal::{
    Journal, PlannedStep, Release, ReleaseId, ReleaseKind, ReleaseState, StepOutcome, StepState,
};
use futures::{StreamExt, stream};
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions};
use piceli_core::model::App;
use serde_json::Value;
use std::collections::BTreeMap;

mod preconditions;
mod replace_step;
mod step;
use preconditions::*;
use replace_step::*;
pub use step::is_transient;
use step::*;

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
    // The Secrets holding a CA first: the certificates they sign are made with their values.
    let mut checking: Vec<&Action> = plan.actions.iter().collect();
    checking.sort_by_key(|a| !(a.kind == "Secret" && super::secrets::signs(app, &a.name)));
    for a in checking {
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
    let key = &plan_opts.digest_key;
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
        let mut fill = Fill {
            live: None,
            generate: false,
            env: &plan_opts.env,
            rotate: &a.rotate,
            cas: &plan_opts.cas,
        };
        materialize(app, &mut planned, &fill)?;
        let now = super::hash::digest(&redact(&planned, key));
        fill.live = live.as_ref();
        let with_live = {
            let mut o = d.object.clone();
            materialize(app, &mut o, &fill)?;
            super::hash::digest(&redact(&o, key))
        };
        if Some(&now) != a.desired_digest.as_ref() && Some(&with_live) != a.desired_digest.as_ref()
        {
            return Err(EngineError::Stale(format!(
                "{} renders differently than when it was planned",
                a.key()
            )));
        }
        // The CAs it is signed by, as they are live (their own steps may be done already).
        for ca in super::secrets::signed_by(app, &a.name) {
            if !plan_opts.cas.has(&ca) {
                let probe = serde_json::json!({"apiVersion": "v1", "kind": "Secret"});
                let served = resources.served(&conn.client, &probe).await?;
                let ca_live =
                    super::resources::read(&conn.client, &served, d.namespace.as_deref(), &ca)
                        .await
                        .map_err(|e| EngineError::cluster(format!("reading Secret {ca}"), e))?;
                let mut o = serde_json::json!({"metadata": {"name": ca}});
                let ca_fill = Fill {
                    live: ca_live.as_ref(),
                    rotate: &[],
                    ..fill
                };
                materialize(app, &mut o, &ca_fill)?;
            }
        }
        // A rotation the interrupted run may have written already is made again: a new value either way.
        fill.generate = true;
        materialize(app, &mut d.object, &fill)?;
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
