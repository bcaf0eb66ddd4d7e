//! `deploy` and `check`: plan → (approval) → apply → readiness → checks → rollback when configured, as
//! one journaled run that `deploy --resume` continues from the stage it reached.
//!
//! A plan with no changes needs no approval: nothing is applied, readiness is confirmed and the checks
//! run (so changing only a check runs the checks without writing anything).

use super::error::EngineError;
use super::plan::{ActionKind, Plan};
use super::session::Session;
use crate::checks::{self, CheckContext, CodeCheck, Outcome};
use crate::journal::{DeployRun, DeployStage, DeployState, ReleaseId, ReleaseState};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One step of a deploy, as it happens (`-o json` prints each as a JSON line).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DeployEvent {
    /// The plan was made (or, resuming, the run's plan was loaded).
    Plan {
        /// The plan's hash.
        hash: String,
        /// Whether it changes anything.
        changes: bool,
        /// Objects to create, update (incl. adopt), delete, and left unchanged.
        create: usize,
        /// …
        update: usize,
        /// …
        delete: usize,
        /// …
        unchanged: usize,
        /// Warnings about the plan (an `external` object missing in the cluster, PCL0165).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    /// `deploy --resume` picked up an interrupted run.
    Resume {
        /// The run.
        run: u64,
        /// The stage it continues from (`plan`, `apply`, `ready`, `checks`, `rollback`).
        stage: &'static str,
    },
    /// The plan was applied (or there was nothing to apply: `release` is `None`).
    Apply {
        /// The run.
        run: u64,
        /// The release made.
        release: Option<u64>,
        /// Objects written.
        written: usize,
        /// Objects unchanged.
        unchanged: usize,
    },
    /// Every applied workload is ready.
    Ready {
        /// The run.
        run: u64,
        /// How long the wait took.
        waited_ms: u64,
    },
    /// One check ended.
    Check {
        /// The run (`None` for `check`).
        run: Option<u64>,
        /// Its name.
        name: String,
        /// Its kind.
        kind: &'static str,
        /// Whether it passed.
        passed: bool,
        /// Attempts made.
        attempts: u32,
        /// What the last attempt saw.
        message: String,
        /// How long it took.
        duration_ms: u64,
    },
    /// The automatic rollback after a failed check.
    Rollback {
        /// The run.
        run: u64,
        /// The release whose checks failed (now `failed` in the journal).
        failed_release: u64,
        /// The release whose objects were restored (`None`: there was none before).
        restored: Option<u64>,
        /// The rollback release made (`None` when nothing needed writing, or nothing to restore).
        release: Option<u64>,
    },
}

impl DeployEvent {
    fn check(run: Option<u64>, o: &Outcome) -> DeployEvent {
        DeployEvent::Check {
            run,
            name: o.name.clone(),
            kind: o.kind,
            passed: o.passed,
            attempts: o.attempts,
            message: o.message.clone(),
            duration_ms: o.duration_ms,
        }
    }
}

/// How a deploy ended (errors aside).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeployReport {
    /// The run (`None`: approval required, or nothing to resume).
    pub run: Option<u64>,
    /// The plan's hash.
    pub hash: Option<String>,
    /// The plan has changes and `--approve HASH` was not given: nothing was written.
    pub approval_required: bool,
    /// The release the checks ran against (made by this run, or the live one).
    pub release: Option<u64>,
    /// Each check.
    pub checks: Vec<Outcome>,
    /// After a failed check: the release whose objects were restored.
    pub restored: Option<u64>,
    /// After a failed check: the rollback release made.
    pub rollback_release: Option<u64>,
    /// Why a failed check was not rolled back (not configured, nothing applied, no earlier release).
    pub no_rollback: Option<String>,
}

impl DeployReport {
    /// The names of the checks that failed.
    pub fn failed(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.as_str())
            .collect()
    }
}

/// How `deploy` was asked to run.
#[derive(Debug, Clone, Default)]
pub struct DeployOptions {
    /// `--approve HASH`.
    pub approve: Option<String>,
    /// `--resume`.
    pub resume: bool,
}

/// Whether `--approve GIVEN` approves the plan `hash`: the whole hash, or a prefix of at least 12 digits.
fn approves(given: &str, hash: &str) -> bool {
    let given = given.trim().to_ascii_lowercase();
    given.len() >= super::approved::MIN_PREFIX && hash.starts_with(&given)
}

fn plan_event(plan: &Plan) -> DeployEvent {
    let count =
        |f: &dyn Fn(&ActionKind) -> bool| plan.actions.iter().filter(|a| f(&a.action)).count();
    DeployEvent::Plan {
        hash: plan.hash.clone(),
        changes: plan.has_changes(),
        create: count(&|k| *k == ActionKind::Create),
        update: count(&|k| matches!(k, ActionKind::Update | ActionKind::Adopt)),
        delete: count(&|k| *k == ActionKind::Delete),
        unchanged: count(&|k| matches!(k, ActionKind::Unchanged | ActionKind::Use)),
        warnings: plan.requires.iter().filter_map(|r| r.warning()).collect(),
    }
}

impl Session {
    /// The namespace the app's objects are in (`--namespace` or the target's).
    pub fn namespace(&self) -> String {
        self.render
            .namespace
            .clone()
            .unwrap_or_else(|| self.target.namespace.v.clone())
    }

    fn check_context(&self, release: Option<u64>) -> CheckContext {
        CheckContext::new(
            self.conn.client.clone(),
            self.namespace(),
            Arc::new(self.app.clone()),
            release,
        )
    }

    /// `check`: run the declared checks against the live release now and journal the results.
    pub async fn check(
        &self,
        code: &[CodeCheck],
        mut on_event: impl FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        self.repair_record().await?;
        let release = self.live_release()?;
        let cx = self.check_context(release);
        let outcomes = checks::run_all(&cx, &self.app.checks, code, |o| {
            on_event(&DeployEvent::check(None, o))
        })
        .await;
        let records: Vec<_> = outcomes.iter().map(Outcome::record).collect();
        self.journal.record_check_results(None, release, &records)?;
        Ok(DeployReport {
            release,
            checks: outcomes,
            ..DeployReport::default()
        })
    }

    /// `deploy`: see the module docs. Readiness waits use the session's `wait` (none: no wait).
    pub async fn deploy(
        &mut self,
        opts: &DeployOptions,
        code: &[CodeCheck],
        mut on_event: impl FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        // A kill between the journal's `succeeded` and the cluster's record lost the record: repair it.
        self.repair_record().await?;
        // The stages below wait for readiness themselves, so apply and resume must not.
        let wait = self.wait.take();
        // A deploy's release succeeds only once its checks passed (`finish_run` completes it).
        self.defer_completion = true;
        let before_apply = self.before_apply.take();
        let result = if opts.resume {
            self.deploy_resume(code, wait, &mut on_event).await
        } else {
            self.deploy_new(opts, code, wait, before_apply, &mut on_event)
                .await
        };
        self.defer_completion = false;
        self.wait = wait;
        result
    }

    async fn deploy_new(
        &self,
        opts: &DeployOptions,
        code: &[CodeCheck],
        wait: Option<std::time::Duration>,
        before_apply: Option<super::session::BeforeApply>,
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        let plan = self.plan(Vec::new(), false).await?;
        on_event(&plan_event(&plan));
        if plan.has_changes() {
            match &opts.approve {
                None => {
                    return Ok(DeployReport {
                        hash: Some(plan.hash.clone()),
                        approval_required: true,
                        ..DeployReport::default()
                    });
                }
                Some(approved) if !approves(approved, &plan.hash) => {
                    let stale = matches!(self.resolve_hash(approved), Ok(h) if h != plan.hash);
                    return Err(EngineError::ApprovalMismatch {
                        planned: plan.hash.clone(),
                        approved: approved.clone(),
                        stale,
                    });
                }
                Some(_) => {}
            }
        }
        if plan.has_changes()
            && let Some(running) = self.journal.unfinished()?
        {
            return Err(EngineError::ReleaseRunning(running.number));
        }
        // Built images are delivered only now, once the plan (which shows their digests) is approved.
        if let Some(deliver) = before_apply {
            deliver.await?;
        }
        let run = self.journal.begin_deploy(&plan.hash)?;
        let released = if plan.has_changes() {
            self.journal.deploy_stage(run, DeployStage::Apply, None)?;
            let applied = self.apply(&plan.hash).await;
            let applied = self.interrupted_on_error(run, applied)?;
            on_event(&DeployEvent::Apply {
                run,
                release: applied.release,
                written: applied.written,
                unchanged: applied.unchanged,
            });
            applied.release
        } else {
            on_event(&DeployEvent::Apply {
                run,
                release: None,
                written: 0,
                unchanged: plan.actions.len(),
            });
            None
        };
        self.journal
            .deploy_stage(run, DeployStage::Ready, released)?;
        self.finish_run(run, &plan, released, code, wait, on_event)
            .await
    }

    async fn deploy_resume(
        &self,
        code: &[CodeCheck],
        wait: Option<std::time::Duration>,
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        let Some(run) = self.journal.unfinished_deploy()? else {
            return Ok(DeployReport::default());
        };
        let DeployRun {
            id, stage, release, ..
        } = run;
        on_event(&DeployEvent::Resume {
            run: id,
            stage: stage.as_str(),
        });
        let plan = self.approved_plan(&run.plan_hash)?;
        on_event(&plan_event(&plan));
        let mut released = release;
        if matches!(stage, DeployStage::Plan | DeployStage::Apply) {
            // Where the interrupted apply got to: the release this run's plan made since the run began.
            let made = self
                .journal
                .releases()?
                .into_iter()
                .find(|r| r.plan_hash == run.plan_hash && r.started_at >= run.started_at);
            let applied = match made.as_ref().map(|r| r.state) {
                Some(ReleaseState::Running) => self.resume().await,
                Some(ReleaseState::Succeeded) => Ok(super::apply::Applied {
                    release: made.as_ref().map(|r| r.number),
                    written: 0,
                    unchanged: 0,
                }),
                Some(state) => {
                    // The apply ended without succeeding (rejected, abandoned): nothing to continue.
                    let message = format!(
                        "the run's release {} ended {state}: nothing to resume; plan again",
                        made.as_ref().map(|r| r.number).unwrap_or_default()
                    );
                    self.journal
                        .finish_deploy(id, DeployState::Failed, None, &message)?;
                    return Ok(DeployReport::default());
                }
                // The apply never began its release: do it now (the plan is approved).
                None if plan.has_changes() => self.apply(&plan.hash).await,
                None => Ok(super::apply::Applied::default()),
            };
            let applied = self.interrupted_on_error(id, applied)?;
            released = applied.release;
            on_event(&DeployEvent::Apply {
                run: id,
                release: applied.release,
                written: applied.written,
                unchanged: applied.unchanged,
            });
            self.journal
                .deploy_stage(id, DeployStage::Ready, released)?;
        }
        if stage == DeployStage::Rollback {
            // The rollback release was being applied: finish it, then end the run as failed.
            let finished = self.interrupted_on_error(id, self.resume().await)?;
            if let Some(n) = finished.release {
                let done = self.ready_and_complete(n, wait).await;
                self.interrupted_on_error(id, done)?;
            }
            let message = "resumed the interrupted rollback";
            self.journal
                .finish_deploy(id, DeployState::Failed, finished.release, message)?;
            return Ok(DeployReport {
                run: Some(id),
                hash: Some(plan.hash),
                release: released,
                rollback_release: finished.release,
                ..DeployReport::default()
            });
        }
        self.finish_run(id, &plan, released, code, wait, on_event)
            .await
    }

    /// Wait until release `n`'s objects are ready, then mark it succeeded and record it.
    async fn ready_and_complete(
        &self,
        n: u64,
        wait: Option<std::time::Duration>,
    ) -> Result<(), EngineError> {
        let release = self
            .journal
            .release(ReleaseId(n))?
            .ok_or_else(|| EngineError::UnknownRelease(format!("there is no release {n}")))?;
        let plan = self.approved_plan(&release.plan_hash)?;
        if let Some(timeout) = wait {
            super::ready::wait_with(&self.conn, &plan, timeout, self.progress.as_deref()).await?;
        }
        self.complete_release(&plan, n).await
    }

    /// Records an error as the run's interruption (it stays resumable) and passes it on.
    fn interrupted_on_error<T>(
        &self,
        run: u64,
        result: Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        if let Err(e) = &result {
            let _ = self.journal.deploy_interrupted(run, &e.to_string());
        }
        result
    }

    /// Readiness, checks, and the rollback when a check fails.
    async fn finish_run(
        &self,
        run: u64,
        plan: &Plan,
        released: Option<u64>,
        code: &[CodeCheck],
        wait: Option<std::time::Duration>,
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        let started = Instant::now();
        if let Some(timeout) = wait {
            let ready =
                super::ready::wait_with(&self.conn, plan, timeout, self.progress.as_deref()).await;
            self.interrupted_on_error(run, ready)?;
        }
        on_event(&DeployEvent::Ready {
            run,
            waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        self.journal.deploy_stage(run, DeployStage::Checks, None)?;
        let release = match released {
            Some(n) => Some(n),
            None => self.live_release()?,
        };
        let cx = self.check_context(release);
        let outcomes = checks::run_all(&cx, &self.app.checks, code, |o| {
            on_event(&DeployEvent::check(Some(run), o))
        })
        .await;
        let records: Vec<_> = outcomes.iter().map(Outcome::record).collect();
        self.journal
            .record_check_results(Some(run), release, &records)?;
        let mut report = DeployReport {
            run: Some(run),
            hash: Some(plan.hash.clone()),
            release,
            checks: outcomes,
            ..DeployReport::default()
        };
        let failed = report.failed().join(", ");
        if failed.is_empty() {
            if let Some(n) = released {
                // Ready and checked: only now is the release `succeeded` (and recorded in the cluster).
                let done = self.complete_release(plan, n).await;
                self.interrupted_on_error(run, done)?;
            }
            self.journal
                .finish_deploy(run, DeployState::Succeeded, None, "")?;
            return Ok(report);
        }
        if let Some(n) = released {
            // Its checks failed: the release is `failed` (visible in `history`), never a rollback point.
            self.fail_after_checks(n)?;
        }
        let why_not = if !self.target.rollback_on_failed_checks {
            Some(format!(
                "target `{}` does not set `rollback_on_failed_checks`",
                self.target.name.v
            ))
        } else if released.is_none() {
            Some("this run applied nothing, so there is nothing to roll back".to_string())
        } else {
            None
        };
        if let (None, Some(failed_release)) = (&why_not, released) {
            self.journal
                .deploy_stage(run, DeployStage::Rollback, None)?;
            let (restored, rollback_release) = self.roll_back(run, failed_release, wait).await?;
            on_event(&DeployEvent::Rollback {
                run,
                failed_release,
                restored,
                release: rollback_release,
            });
            report.restored = restored;
            report.rollback_release = rollback_release;
            if restored.is_none() {
                report.no_rollback = Some(format!(
                    "release {failed_release} is the first release: there is nothing to roll back to"
                ));
            }
        } else {
            report.no_rollback = why_not;
        }
        let message = format!("check(s) failed: {failed}");
        self.journal
            .finish_deploy(run, DeployState::Failed, report.rollback_release, &message)?;
        Ok(report)
    }

    /// Re-applies the succeeded release before `failed_release` and marks `failed_release` failed:
    /// the restored release and the rollback release (none when nothing was before it).
    async fn roll_back(
        &self,
        run: u64,
        failed_release: u64,
        wait: Option<std::time::Duration>,
    ) -> Result<(Option<u64>, Option<u64>), EngineError> {
        // The newest succeeded release before the failed one (the failed one never succeeded).
        let earlier = self
            .journal
            .releases()?
            .into_iter()
            .find(|r| r.state == ReleaseState::Succeeded && r.number < failed_release)
            .map(|r| r.number);
        let Some(earlier) = earlier else {
            return Ok((None, None));
        };
        let failed = |e: EngineError| {
            let message = format!(
                "release {failed_release} failed its checks, and rolling it back failed: {e}"
            );
            let _ = self.journal.deploy_interrupted(run, &message);
            EngineError::RollbackFailed(message)
        };
        let plan = self.plan_rollback(Some(earlier)).await.map_err(failed)?;
        let restored = plan.rollback_of;
        let rollback_release = if plan.has_changes() {
            let applied = self.apply(&plan.hash).await.map_err(failed)?;
            if let Some(n) = applied.release {
                self.ready_and_complete(n, wait).await.map_err(failed)?;
            }
            applied.release
        } else {
            None
        };
        Ok((restored, rollback_release))
    }

    /// Mark release `n` failed after its checks failed (from `running`, or `succeeded` when a resumed
    /// run finds it completed by an earlier attempt).
    fn fail_after_checks(&self, n: u64) -> Result<(), EngineError> {
        let release = self.journal.release(ReleaseId(n))?;
        match release.map(|r| r.state) {
            Some(ReleaseState::Succeeded) => self
                .journal
                .fail_release_after_checks(ReleaseId(n))
                .map_err(EngineError::from),
            Some(ReleaseState::Failed) | None => Ok(()),
            Some(_) => self
                .journal
                .finish_release(ReleaseId(n), ReleaseState::Failed)
                .map_err(EngineError::from),
        }
    }
}
