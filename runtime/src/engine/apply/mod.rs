//! Applying exactly an approved plan: preconditions first (nothing is written when one fails), then server-
//! side apply in dependency order, every step journaled before and after it runs.

use super::error::{Drift, EngineError, Staleness};
use super::lock::LockSlot;
use super::plan::secret_values;
use super::plan::{
    Action, ActionKind, Desired, FIELD_MANAGER, Plan, PlanOptions, desired, is_ours,
};
use super::resources::{Resources, api_for};
use super::secrets::{Fill, materialize, redact};
use super::target::Connection;
use crate::identity::ObjectKey;
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

/// One apply or resume of an approved plan: what it writes, where, and what it may be stopped by.
#[derive(Clone, Copy)]
pub struct ApplyRun<'a> {
    /// The app (ownership of live objects, secret sources).
    pub app: &'a App,
    /// The target's cluster.
    pub conn: &'a Connection,
    /// The state directory's journal.
    pub journal: &'a Journal,
    /// The plan, already verified against its approved hash by the session.
    pub plan: &'a Plan,
    /// The options it was planned with (digest key, secret environment).
    pub plan_opts: &'a PlanOptions,
    /// Test-only: where to stop as if killed.
    pub hook: Option<&'a FaultHook>,
    /// The cluster lock, held for the whole run.
    pub lock: Option<&'a LockSlot>,
}

/// The plan's objects as they will be written (secret values filled in again), by identity.
pub(super) struct Wanted {
    pub(super) objects: Vec<Desired>,
    pub(super) by_key: BTreeMap<ObjectKey, usize>,
}

impl Wanted {
    /// The desired object of an action (none for a deletion).
    pub(super) fn of(&self, key: &ObjectKey) -> Option<&Desired> {
        self.by_key.get(key).map(|&i| &self.objects[i])
    }
}

impl<'a> ApplyRun<'a> {
    /// What apply and resume share before any step: the lock still held, exactly the planned objects.
    async fn prepare(&self) -> Result<(std::sync::Arc<Resources>, Wanted), EngineError> {
        if let Some(lock) = self.lock {
            lock.ensure().await?;
        }
        let resources = self.conn.resources.clone();
        let plan = self.plan;
        let objects = desired(self.conn, &plan.objects, &plan.namespace, &resources).await?;
        let by_key = objects
            .iter()
            .enumerate()
            .map(|(i, d)| (key_of(d), i))
            .collect();
        Ok((resources, Wanted { objects, by_key }))
    }

    /// What every step of this run shares.
    fn steps<'s>(
        &'s self,
        resources: &'s Resources,
        release: ReleaseId,
        rvs: Option<BTreeMap<ObjectKey, String>>,
    ) -> Step<'s> {
        Step {
            conn: self.conn,
            journal: self.journal,
            release,
            resources,
            key: &self.plan_opts.digest_key,
            optimistic: rvs.is_some(),
            rvs: rvs.unwrap_or_default(),
            hook: self.hook,
            lock: self.lock,
        }
    }
}

/// Execute the run's plan, holding its lock: every precondition first, then the writes.
pub async fn apply(run: &ApplyRun<'_>) -> Result<Applied, EngineError> {
    let (app, conn, plan) = (run.app, run.conn, run.plan);
    if plan.server != conn.server {
        return Err(EngineError::OtherServer {
            planned: plan.server.clone(),
            actual: conn.server.clone(),
        });
    }
    // The lock first: the preconditions below hold only while no other apply writes. A first apply
    // creates its namespace to have somewhere to take it.
    let mut created_namespace = false;
    if let Some(lock) = run.lock {
        lock.ensure().await?;
        created_namespace = super::first_apply::lock_first_apply(conn, plan, &app.name.v, lock)
            .await?
            || super::first_apply::created_by_this_plan(conn, plan, &app.name.v).await?;
    }
    // Exactly the planned objects (secret values filled in again, and checked against their digests).
    let (resources, mut wanted) = run.prepare().await?;
    // Every precondition, before any write: the `external` objects as the plan found them, then each action's.
    super::externals::recheck(conn, &resources, &plan.requires).await?;
    // The resourceVersion each write carries: what the precondition check just saw.
    let mut rvs: BTreeMap<ObjectKey, String> = BTreeMap::new();
    // The Secrets holding a CA first: the certificates they sign are made with their values.
    let mut checking: Vec<&Action> = plan.actions.iter().collect();
    checking.sort_by_key(|a| {
        !(a.object.kind == "Secret" && super::secrets::signs(app, &a.object.name))
    });
    for a in checking {
        if created_namespace && a.object.kind == "Namespace" && a.object.name == plan.namespace {
            // Its precondition was the create this apply just made under the lock.
            continue;
        }
        check_precondition(run, &resources, a, &mut wanted, &mut rvs).await?;
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
            object: a.key(),
            action: a.action.as_str().to_string(),
            level: a.level,
            desired_digest: a.desired_digest.clone(),
        })
        .collect();
    checkpoint(run.hook, "preconditions checked")?;
    let kind = if plan.rollback_of.is_some() {
        ReleaseKind::Rollback
    } else {
        ReleaseKind::Apply
    };
    let release = run.journal.begin_release(&plan.hash, kind, &steps)?;
    let number = run
        .journal
        .release(release)
        .ok()
        .flatten()
        .map(|r| r.number);
    checkpoint(run.hook, "release journaled")?;
    let todo: Vec<(u32, &Action)> = changing
        .iter()
        .enumerate()
        .map(|(i, a)| (i as u32, *a))
        .collect();
    run_levels(&run.steps(&resources, release, Some(rvs)), &todo, &wanted).await?;
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
    wanted: &Wanted,
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
        // its custom resources (kube-apiserver serves them only then), and serve every version it lists.
        let crds: Vec<(&str, Option<&Desired>)> = batch
            .iter()
            .filter(|(_, a)| {
                a.object.kind == "CustomResourceDefinition" && a.action != ActionKind::Delete
            })
            .map(|(_, a)| (a.object.name.as_str(), wanted.of(&a.key())))
            .collect();
        let results: Vec<Result<(), EngineError>> =
            stream::iter(batch.into_iter().map(|(idx, a)| {
                let d = wanted.of(&a.key());
                async move { run_step(step, idx, a, d).await }
            }))
            .buffer_unordered(16)
            .collect()
            .await;
        if let Some(e) = results.into_iter().find_map(Result::err) {
            // Only a write the server rejected fails the release; an interruption (a kill, a lost
            // connection, a lost lock, the journal) leaves it `running` for `resume`.
            if matches!(e, EngineError::Apply { .. }) {
                let _ = journal.finish_release(step.release, ReleaseState::Failed);
            }
            return Err(e);
        }
        if i < todo.len() {
            for (name, desired) in crds {
                let desired = desired.map(|d| &d.object);
                super::ready::wait_established(step.conn, step.resources, name, desired).await?;
            }
        }
    }
    Ok(())
}

/// Continue the release a killed or stopped apply left `running`: every step not done runs again.
/// Server-side apply of the same object is idempotent, so a write that may or may not have landed is
/// simply applied again (no change when it had landed); a deletion whose object is gone is done.
pub async fn resume(run: &ApplyRun<'_>, release: &Release) -> Result<Applied, EngineError> {
    let (resources, mut wanted) = run.prepare().await?;
    let steps = run.journal.steps(release.id)?;
    let mut todo = Vec::new();
    let actions_by_key: std::collections::HashMap<ObjectKey, &Action> =
        run.plan.actions.iter().map(|a| (a.key(), a)).collect();
    for s in &steps {
        if s.state == StepState::Done {
            continue;
        }
        let key = &s.object;
        let Some(a) = actions_by_key.get(key).copied() else {
            return Err(EngineError::Stale {
                object: key.clone(),
                reason: Staleness::StepNotInPlan {
                    release: release.number,
                },
            });
        };
        if a.action != ActionKind::Delete {
            let Some(&w) = wanted.by_key.get(key) else {
                return Err(EngineError::Stale {
                    object: key.clone(),
                    reason: Staleness::NoLongerDeclared,
                });
            };
            prepare_resumed(run, &resources, a, &mut wanted.objects[w]).await?;
        }
        todo.push((s.index, a));
    }
    let written = todo.len();
    run_levels(&run.steps(&resources, release.id, None), &todo, &wanted).await?;
    Ok(Applied {
        release: Some(release.number),
        written,
        unchanged: 0,
    })
}

/// Check a resumed object still renders as planned, and fill in its secret values (a generated value the
/// interrupted run already wrote is kept).
async fn prepare_resumed(
    run: &ApplyRun<'_>,
    resources: &Resources,
    a: &Action,
    d: &mut Desired,
) -> Result<(), EngineError> {
    let (app, conn, plan_opts) = (run.app, run.conn, run.plan_opts);
    let key = &plan_opts.digest_key;
    let live = if a.object.kind == "Secret" {
        let served = resources
            .served(&conn.client, &crate::identity::gvk_of(&d.object))
            .await?;
        super::resources::read(
            &conn.client,
            &served,
            d.namespace.as_deref(),
            &a.object.name,
        )
        .await
        .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?
    } else {
        None
    };
    let mut planned = d.object.clone();
    if a.object.kind == "Secret" {
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
            return Err(EngineError::Stale {
                object: a.key(),
                reason: Staleness::RendersDifferently,
            });
        }
        // The CAs it is signed by, as they are live (their own steps may be done already).
        for ca in super::secrets::signed_by(app, &a.object.name) {
            if !plan_opts.cas.has(&ca) {
                let secret = crate::identity::gvk("v1", "Secret");
                let served = resources.served(&conn.client, &secret).await?;
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
        return Err(EngineError::Stale {
            object: a.key(),
            reason: Staleness::RendersDifferently,
        });
    }
    Ok(())
}
