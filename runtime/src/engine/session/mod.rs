//! One engine command's context — the app for a target, its state directory and journal, and a
//! connection to its cluster — and the operations the CLI calls: plan and apply.

use super::apply::{Applied, ApplyRun, FaultHook, apply, resume};
use super::error::EngineError;
use super::plan::{ActionKind, Plan, PlanOptions, Source, plan, plan_source};
use super::state::StateDir;
use super::target::{ConnectOptions, Connection};
use crate::identity::{ObjectKey, ObjectRef};
use crate::journal::{ApplyLock, ApprovalKind};
use crate::render;
use piceli_core::model::{App, Target};
use std::path::PathBuf;

mod builder;
pub use builder::SessionBuilder;

/// How one object differs between two releases.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObjectDiff {
    /// `Kind/namespace/name`.
    pub object: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// Field changes (for `changed`).
    pub diff: Vec<super::diff::Change>,
}

/// Compare two sets of objects by identity.
pub fn diff_objects(from: &[serde_json::Value], to: &[serde_json::Value]) -> Vec<ObjectDiff> {
    let key = ObjectKey::of_object;
    // Keyed once each: finding every object by a scan made a diff quadratic in the number of objects.
    let to_by_key: std::collections::HashMap<ObjectKey, &serde_json::Value> =
        to.iter().map(|b| (key(b), b)).collect();
    let from_keys: std::collections::HashSet<ObjectKey> = from.iter().map(key).collect();
    let mut out = Vec::new();
    for a in from {
        match to_by_key.get(&key(a)).copied() {
            None => out.push(ObjectDiff {
                object: key(a).to_string(),
                change: "removed",
                diff: Vec::new(),
            }),
            Some(b) => {
                // A value generated at apply was a placeholder in its plan: not a difference.
                let placeholder = |v: &Option<serde_json::Value>| {
                    v.as_ref().and_then(|v| v.as_str()) == Some(super::secrets::TO_GENERATE)
                };
                let mut d = super::diff::diff(a, b);
                d.retain(|c| !placeholder(&c.before) && !placeholder(&c.after));
                if !d.is_empty() {
                    out.push(ObjectDiff {
                        object: key(a).to_string(),
                        change: "changed",
                        diff: d,
                    });
                }
            }
        }
    }
    for b in to {
        if !from_keys.contains(&key(b)) {
            out.push(ObjectDiff {
                object: key(b).to_string(),
                change: "added",
                diff: Vec::new(),
            });
        }
    }
    out
}

/// How a command was asked to run.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// `--target` (default: the first declared).
    pub target: Option<String>,
    /// `--namespace`.
    pub namespace: Option<String>,
    /// `--kubeconfig`, `--context`.
    pub connect: ConnectOptions,
    /// `--state-dir` (default `.piceli/<app>/<target>/`).
    pub state_dir: Option<PathBuf>,
    /// How long `apply` and `resume` wait for workloads to be ready (`None`: do not wait).
    pub wait: Option<std::time::Duration>,
    /// `--wait-lock`: how long to wait for another apply's cluster lock (`None`: refuse at once).
    pub wait_lock: Option<std::time::Duration>,
    /// `--env-file FILE` (repeatable): variables `from_env` secret sources read before the environment.
    pub env_files: Vec<PathBuf>,
}

/// An open session, made by [`Session::open`] or [`Session::builder`]; read through its accessors.
pub struct Session {
    /// The app.
    pub(super) app: App,
    /// The target.
    pub(super) target: Target,
    /// Render options (target and namespace).
    pub(super) render: render::Options,
    /// The state directory: its journal and stored plans.
    pub(super) state: StateDir,
    /// The cluster connection.
    pub(super) conn: Connection,
    /// Test-only: stop an apply or resume at a chosen point, as a kill would (always `None` without the
    /// `fault-injection` feature, whose [`FaultHook`] has no values).
    pub(super) fault_hook: Option<std::sync::Arc<FaultHook>>,
    /// How long to wait for readiness after writing (`None`: do not wait).
    pub(super) wait: Option<std::time::Duration>,
    /// How long to wait for another apply's cluster lock (`None`: refuse at once).
    pub(super) wait_lock: Option<std::time::Duration>,
    /// Where readiness waits report progress (`None`: quiet).
    pub(super) progress: Option<std::sync::Arc<super::ready::ProgressFn>>,
    /// Where `from_env` secret sources read (`--env-file`, then the process environment).
    pub(super) env: std::sync::Arc<super::env_file::SecretEnv>,
}

/// How an apply or resume ends its release: `apply`/`resume` wait for readiness (`--timeout`) and mark
/// it succeeded; `deploy` does neither (its own `ready` and `checks` stages do, in that order).
#[derive(Debug, Clone, Copy)]
pub(super) struct Settle {
    /// How long to wait for readiness after the writes (`None`: do not wait).
    pub wait: Option<std::time::Duration>,
    /// Whether to mark the release succeeded once written (and ready).
    pub complete: bool,
}

impl Settle {
    /// What `deploy` asks: no wait, and the release stays `running` until its checks passed.
    pub const DEFERRED: Settle = Settle {
        wait: None,
        complete: false,
    };
}

impl Session {
    /// Resolve the target, open the journal and connect (what [`Session::builder`] does with no
    /// progress reporter and no fault hook).
    pub async fn open(app: App, opts: &SessionOptions) -> Result<Session, EngineError> {
        Session::builder(app, opts.clone()).open().await
    }

    /// A session to open with more than its options: a progress reporter, a test's fault hook.
    pub fn builder(app: App, options: SessionOptions) -> SessionBuilder {
        SessionBuilder::new(app, options)
    }

    /// The app.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The app, for a command that needs it after the session (`access` serves with it).
    pub fn into_app(self) -> App {
        self.app
    }

    /// The target it runs against.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The render options (target and namespace).
    pub fn render_options(&self) -> &render::Options {
        &self.render
    }

    /// The state directory: its journal and stored plans.
    pub fn state(&self) -> &StateDir {
        &self.state
    }

    /// The connection to the target's cluster.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Where readiness waits report progress from now on (`None`: quiet).
    pub fn set_progress(&mut self, progress: Option<std::sync::Arc<super::ready::ProgressFn>>) {
        self.progress = progress;
    }

    /// Test-only: where later applies and resumes stop as if killed (see [`FaultHook`]).
    pub fn set_fault_hook(&mut self, hook: Option<std::sync::Arc<FaultHook>>) {
        self.fault_hook = hook;
    }

    /// The objects the last succeeded release applied (what pruning compares against). A journal that
    /// cannot be read is an error (never "pruning off"); a release made for another namespace or target
    /// prunes nothing here.
    fn previous_objects(&self) -> Result<Vec<ObjectRef>, EngineError> {
        let Some(release) = self.state.journal.last_succeeded()? else {
            return Ok(Vec::new());
        };
        let plan = match self.approved_plan(&release.plan_hash) {
            Err(EngineError::WrongTarget { .. }) => return Ok(Vec::new()),
            other => other?,
        };
        Ok(plan
            .actions
            .into_iter()
            .filter(|a| a.action != ActionKind::Delete)
            .map(|a| a.object)
            .collect())
    }

    fn plan_options(
        &self,
        adopt: Vec<String>,
        adopt_all: bool,
    ) -> Result<PlanOptions, EngineError> {
        Ok(PlanOptions {
            adopt,
            adopt_all,
            previous: self.previous_objects()?,
            digest_key: self.state.digest_key()?,
            env: self.env.clone(),
            force_dry_run: false,
            take_ownership: super::conflicts::TakeOwnership::None,
            forget_helm: Vec::new(),
            rotate: Vec::new(),
            cas: Default::default(),
        })
    }

    /// Plan a rollback to release `to` (default: the succeeded release before the live one), store it,
    /// and return it: like any change it needs `apply --approve HASH`. Secrets keep the values the cluster
    /// holds (values are never stored, so no older value can be restored).
    pub async fn plan_rollback(&self, to: Option<u64>) -> Result<Plan, EngineError> {
        let succeeded: Vec<_> = self
            .state
            .journal
            .releases()?
            .into_iter()
            .filter(|r| r.state == crate::journal::ReleaseState::Succeeded)
            .collect();
        let target = match to {
            Some(n) => succeeded.iter().find(|r| r.number == n).ok_or_else(|| {
                EngineError::UnknownRelease(format!("release {n} is not a succeeded release of this target (see `history`)"))
            })?,
            None => succeeded.get(1).ok_or_else(|| {
                EngineError::UnknownRelease("there is no earlier release to roll back to (a first release has nothing before it)".into())
            })?,
        };
        let old = self.approved_plan(&target.plan_hash)?;
        let opts = self.plan_options(Vec::new(), false)?;
        let source = Source {
            target: old.target.clone(),
            namespace: old.namespace.clone(),
            objects: old.objects.clone(),
            rollback_of: Some(target.number),
        };
        let (plan, _) = plan_source(&self.app, &self.conn, source, &opts).await?;
        self.state.store_plan(&plan)?;
        Ok(plan)
    }

    /// The plan a release applied (its objects are what the release made live).
    fn release_plan(&self, number: u64) -> Result<Plan, EngineError> {
        let release = self
            .state
            .journal
            .release(crate::journal::ReleaseId(number))?
            .ok_or_else(|| {
                EngineError::UnknownRelease(format!("there is no release {number} (see `history`)"))
            })?;
        self.approved_plan(&release.plan_hash)
    }

    /// The number of the live release (the newest succeeded one).
    pub fn live_release(&self) -> Result<Option<u64>, EngineError> {
        Ok(self.state.journal.last_succeeded()?.map(|r| r.number))
    }

    /// Field-level differences between the objects of two releases (secret values as digests).
    pub fn diff_releases(&self, from: u64, to: u64) -> Result<Vec<ObjectDiff>, EngineError> {
        let (a, b) = (self.release_plan(from)?, self.release_plan(to)?);
        Ok(diff_objects(&a.objects, &b.objects))
    }

    /// What differs between a release's objects and the live cluster (drift): the release's objects
    /// dry-run against the cluster, as a plan would, without storing anything.
    pub async fn diff_live(&self, release: u64) -> Result<Plan, EngineError> {
        let old = self.release_plan(release)?;
        let mut opts = self.plan_options(Vec::new(), true)?;
        opts.previous.clear();
        opts.force_dry_run = true;
        let source = Source {
            target: old.target,
            namespace: old.namespace,
            objects: old.objects,
            rollback_of: Some(release),
        };
        Ok(plan_source(&self.app, &self.conn, source, &opts).await?.0)
    }

    /// Plan and store the plan under its hash.
    pub async fn plan(&self, adopt: Vec<String>, adopt_all: bool) -> Result<Plan, EngineError> {
        self.plan_taking(adopt, adopt_all, super::conflicts::TakeOwnership::None)
            .await
    }

    /// Plan, taking over the conflicting fields `take` names from other field managers, and store it.
    pub async fn plan_taking(
        &self,
        adopt: Vec<String>,
        adopt_all: bool,
        take: super::conflicts::TakeOwnership,
    ) -> Result<Plan, EngineError> {
        self.plan_forgetting(adopt, adopt_all, take, Vec::new())
            .await
    }

    /// [`Session::plan_taking`], removing the claim of the Helm releases `forget_helm` names
    /// (`--forget-helm-release`): their annotations on the app's objects, and their release Secrets.
    pub async fn plan_forgetting(
        &self,
        adopt: Vec<String>,
        adopt_all: bool,
        take: super::conflicts::TakeOwnership,
        forget_helm: Vec<String>,
    ) -> Result<Plan, EngineError> {
        self.plan_rotating(adopt, adopt_all, take, forget_helm, Vec::new())
            .await
    }

    /// [`Session::plan_forgetting`], making the generated secret values `rotate` names again
    /// (`--rotate SECRET[.KEY]`).
    pub async fn plan_rotating(
        &self,
        adopt: Vec<String>,
        adopt_all: bool,
        take: super::conflicts::TakeOwnership,
        forget_helm: Vec<String>,
        rotate: Vec<String>,
    ) -> Result<Plan, EngineError> {
        let mut opts = self.plan_options(adopt, adopt_all)?;
        opts.take_ownership = take;
        opts.forget_helm = forget_helm;
        opts.rotate = rotate;
        let (plan, _) = plan(&self.app, &self.conn, &self.render, &opts).await?;
        self.state.store_plan(&plan)?;
        Ok(plan)
    }

    /// Apply the stored plan `hash` (verified: [`Session::approved_plan`]), holding the state
    /// directory's file lock and, when it writes anything, the target's cluster lock.
    /// The approval is journaled first (`apply --approve HASH`), so `resume` may finish the release.
    pub async fn apply(&self, hash: &str) -> Result<Applied, EngineError> {
        let full = self.resolve_hash(hash)?;
        let command = format!("apply --approve {}", hash.trim());
        self.state
            .journal
            .record_approval(&full, None, ApprovalKind::Approved, &command)?;
        self.apply_settled(&full, self.command_settle()).await
    }

    /// `apply` and `resume` as commands: wait `--timeout`, then mark the release succeeded.
    fn command_settle(&self) -> Settle {
        Settle {
            wait: self.wait,
            complete: true,
        }
    }

    /// [`Session::apply`], ending the release as `settle` says.
    pub(super) async fn apply_settled(
        &self,
        hash: &str,
        settle: Settle,
    ) -> Result<Applied, EngineError> {
        let _lock: ApplyLock = self.state.lock()?;
        let hash = self.resolve_hash(hash)?;
        let planned = self.approved_plan(&hash)?;
        if planned.has_changes() {
            self.require_approval("this apply", &hash, None)?;
        }
        if let Some(running) = self.state.journal.unfinished()? {
            return Err(EngineError::ReleaseRunning(running.number));
        }
        // A stop asked for while nothing ran is not meant for this run.
        if self.state.journal.stop_requested()? {
            self.state.journal.clear_stop()?;
        }
        let adopt: Vec<String> = planned
            .actions
            .iter()
            .filter(|a| a.action == ActionKind::Adopt)
            .map(|a| a.key().to_string())
            .collect();
        let opts = self.plan_options(adopt, false)?;
        let slot = if planned.has_changes() {
            let next = self.state.journal.next_release_number()?;
            Some(self.lock_slot(&planned, next)?)
        } else {
            None
        };
        let run = ApplyRun {
            app: &self.app,
            conn: &self.conn,
            journal: &self.state.journal,
            plan: &planned,
            plan_opts: &opts,
            hook: self.fault_hook.as_deref(),
            lock: slot.as_ref(),
        };
        let applied = apply(&run).await;
        let settled = match applied {
            Ok(applied) => self.settle(&planned, applied, settle).await,
            Err(e) => Err(e),
        };
        release_slot(slot, &settled, !settle.complete).await;
        settled
    }

    /// Continue the release an interrupted apply left running (nothing to do: `release` is `None`,
    /// and a missing or stale release record in the cluster is repaired).
    pub async fn resume(&self) -> Result<Applied, EngineError> {
        self.resume_settled(self.command_settle()).await
    }

    /// [`Session::resume`], ending the release as `settle` says.
    pub(super) async fn resume_settled(&self, settle: Settle) -> Result<Applied, EngineError> {
        let _lock: ApplyLock = self.state.lock()?;
        let opts = self.plan_options(Vec::new(), false)?;
        let Some(release) = self.state.journal.unfinished()? else {
            self.repair_record().await?;
            return Ok(Applied::default());
        };
        let plan = self.running_plan(&release).await?;
        self.require_approval(&format!("release {}", release.number), &plan.hash, None)?;
        if self.state.journal.stop_requested()? {
            self.state.journal.clear_stop()?;
        }
        let slot = self.lock_slot(&plan, release.number)?;
        let run = ApplyRun {
            app: &self.app,
            conn: &self.conn,
            journal: &self.state.journal,
            plan: &plan,
            plan_opts: &opts,
            hook: self.fault_hook.as_deref(),
            lock: Some(&slot),
        };
        let applied = resume(&run, &release).await;
        let settled = match applied {
            Ok(applied) => self.settle(&plan, applied, settle).await,
            Err(e) => Err(e),
        };
        release_slot(Some(slot), &settled, !settle.complete).await;
        settled
    }

    /// After the writes of a release: wait until its objects are ready (`--timeout`), then mark it
    /// `succeeded` and record it — unless a `deploy` defers that until its checks passed. A release that
    /// did not get ready stays `running` (PCL0115): `resume` waits for it again, `resume --abandon` ends it.
    async fn settle(
        &self,
        plan: &Plan,
        applied: Applied,
        settle: Settle,
    ) -> Result<Applied, EngineError> {
        let Some(number) = applied.release else {
            return Ok(applied);
        };
        if let Some(timeout) = settle.wait {
            super::ready::wait_with(&self.conn, plan, timeout, self.progress.as_deref()).await?;
        }
        if settle.complete {
            self.complete_release(plan, number).await?;
        }
        Ok(applied)
    }

    /// Mark release `number` (of `plan`) `succeeded` and write the cluster's record.
    pub async fn complete_release(&self, plan: &Plan, number: u64) -> Result<(), EngineError> {
        super::apply::complete(
            &self.conn,
            &self.state.journal,
            plan,
            crate::journal::ReleaseId(number),
            self.fault_hook.as_deref(),
        )
        .await
    }

    /// `resume --abandon`: end the running release as `superseded` (journaled; nothing is written to the
    /// cluster), so a new plan can be approved. Returns the release ended (`None`: nothing was running).
    pub async fn abandon(&self) -> Result<Option<u64>, EngineError> {
        let _lock: ApplyLock = self.state.lock()?;
        let Some(release) = self.state.journal.unfinished()? else {
            return Ok(None);
        };
        self.state
            .journal
            .finish_release(release.id, crate::journal::ReleaseState::Superseded)?;
        if let Some(run) = self.state.journal.unfinished_deploy()? {
            let message = format!(
                "release {} abandoned with `resume --abandon`",
                release.number
            );
            self.state.journal.finish_deploy(
                run.id,
                crate::journal::DeployState::Failed,
                None,
                &message,
            )?;
        }
        self.state.journal.clear_stop()?;
        // The Lease no longer records it (best effort: a Lease held by another live apply stays as is).
        if let Ok(plan) = self.approved_plan(&release.plan_hash)
            && let Ok(slot) = self.lock_slot(&plan, release.number)
            && slot.ensure().await.is_ok()
        {
            slot.release(true).await;
        }
        Ok(Some(release.number))
    }

    /// Write the release record again when the cluster's is missing or names an older release of this
    /// journal (a kill between the journal's `succeeded` and the record). A record naming a plan this
    /// journal never made (another machine's newer release) is left alone.
    pub async fn repair_record(&self) -> Result<bool, EngineError> {
        let Some(live) = self.state.journal.last_succeeded()? else {
            return Ok(false);
        };
        let plan = match self.approved_plan(&live.plan_hash) {
            // The live release is another namespace's (`--namespace` differs): its record is not here.
            Err(EngineError::WrongTarget { .. }) => return Ok(false),
            other => other?,
        };
        let recorded = super::record::read(&self.conn, &self.app.name.v, &plan.namespace).await?;
        let stale = match &recorded {
            None => true,
            Some((_, hash)) if *hash == live.plan_hash => false,
            Some((_, hash)) => self
                .state
                .journal
                .releases()?
                .iter()
                .any(|r| r.plan_hash == *hash && r.number < live.number),
        };
        if !stale {
            return Ok(false);
        }
        let at = live.finished_at.clone().unwrap_or_default();
        super::record::write(&self.conn, &plan, live.number, &at).await?;
        Ok(true)
    }
}

/// Release the cluster lock after an apply or resume: the Lease stops recording the release unless the
/// run was interrupted (it stays resumable, and `resume` verifies against the record).
async fn release_slot(
    slot: Option<super::lock::LockSlot>,
    result: &Result<Applied, EngineError>,
    deferred: bool,
) {
    let Some(slot) = slot else { return };
    match result {
        // Still running until a deploy's checks pass: the Lease keeps its record for `resume`.
        Ok(applied) if deferred && applied.release.is_some() => slot.release(false).await,
        // As a kill would: nothing released (the Lease expires; a resume from this journal takes it).
        #[cfg(feature = "fault-injection")]
        Err(EngineError::Killed(_)) => drop(slot),
        Err(
            EngineError::Interrupted(_)
            | EngineError::Stopped(_)
            | EngineError::Journal(_)
            | EngineError::NotReady { .. }
            | EngineError::ClusterLocked { .. },
        ) => slot.release(false).await,
        _ => slot.release(true).await,
    }
}
