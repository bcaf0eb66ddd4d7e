//! `deploy` after its approval: the `apply` and `checks` stages, readiness and completing the release,
//! and the `rollback` a target asks for when its checks fail.

use super::*;

impl Session {
    /// `apply`: continue the release this run made since it began, or make it.
    pub(super) async fn apply_stage(
        &self,
        run: &mut RunState,
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<Step, EngineError> {
        let plan = run.plan.as_ref().ok_or_else(missing_plan)?;
        let id = run.id.ok_or_else(missing_plan)?;
        let made = self
            .state
            .journal
            .releases()?
            .into_iter()
            .find(|r| r.plan_hash == plan.hash && r.started_at >= run.started_at);
        let applied = match made.as_ref().map(|r| (r.number, r.state)) {
            Some((_, ReleaseState::Running)) => self.resume_settled(Settle::DEFERRED).await?,
            Some((n, ReleaseState::Succeeded)) => crate::engine::apply::Applied {
                release: Some(n),
                written: 0,
                unchanged: 0,
            },
            Some((n, state)) => {
                // The apply ended without succeeding (rejected, abandoned): nothing to continue.
                let message =
                    format!("the run's release {n} ended {state}: nothing to resume; plan again");
                self.state
                    .journal
                    .finish_deploy(id, DeployState::Failed, None, &message)?;
                return Ok(skipped(DeployStage::Done, message));
            }
            None if plan.has_changes() => self.apply_settled(&plan.hash, Settle::DEFERRED).await?,
            None => crate::engine::apply::Applied {
                release: None,
                written: 0,
                unchanged: plan.actions.len(),
            },
        };
        run.released = applied.release;
        on_event(&DeployEvent::Apply {
            run: id,
            release: applied.release,
            written: applied.written,
            unchanged: applied.unchanged,
        });
        Ok(match applied.release {
            Some(n) => done(DeployStage::Ready, format!("release {n}")),
            None => skipped(DeployStage::Ready, "no changes: nothing applied"),
        })
    }

    /// `checks`: the declared checks; passed, the release succeeds; failed, it is `failed` and the run
    /// rolls back when the target says so.
    pub(super) async fn checks_stage(
        &self,
        run: &mut RunState,
        code: &[CodeCheck],
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<Step, EngineError> {
        let plan = run.plan.as_ref().ok_or_else(missing_plan)?;
        let id = run.id.ok_or_else(missing_plan)?;
        let released = run.released;
        let release = match released {
            Some(n) => Some(n),
            None => self.live_release()?,
        };
        let cx = self.check_context(release);
        let outcomes = checks::run_all(&cx, &self.app.checks, code, |o| {
            on_event(&DeployEvent::check(Some(id), o))
        })
        .await;
        let records: Vec<_> = outcomes.iter().map(Outcome::record).collect();
        self.state
            .journal
            .record_check_results(Some(id), release, &records)?;
        run.report.hash = Some(plan.hash.clone());
        run.report.release = release;
        run.report.checks = outcomes;
        let failed = run.report.failed().join(", ");
        let total = run.report.checks.len();
        if failed.is_empty() {
            if let Some(n) = released {
                // Ready and checked: only now is the release `succeeded` (and recorded in the cluster).
                self.complete_release(plan, n).await?;
            }
            self.state
                .journal
                .finish_deploy(id, DeployState::Succeeded, None, "")?;
            let mut detail = format!("{total} check(s) passed");
            if !run.declared.builds.is_empty() {
                // The run succeeded: its outcome does not hang on the cache (a failure is said, not raised).
                match images::gc::collect(&self.state.journal, &self.state.path) {
                    Ok(c) => on_event(&DeployEvent::Image(images::ImageEvent::Collect {
                        kept: c.kept,
                        removed: c.removed,
                        bytes: c.bytes,
                    })),
                    Err(e) => {
                        detail.push_str(&format!(" (the build cache was not collected: {e})"))
                    }
                }
            }
            return Ok(done(DeployStage::Done, detail));
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
        let detail = format!("check(s) failed: {failed}");
        if why_not.is_none() {
            return Ok(done(DeployStage::Rollback, detail));
        }
        run.report.no_rollback = why_not;
        self.state
            .journal
            .finish_deploy(id, DeployState::Failed, None, &detail)?;
        Ok(done(DeployStage::Done, detail))
    }

    /// `rollback`: re-apply the succeeded release before the failed one (or finish that rollback's
    /// release when a resumed run finds it running), then end the run as failed.
    pub(super) async fn rollback_stage(
        &self,
        run: &mut RunState,
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<Step, EngineError> {
        let id = run.id.ok_or_else(missing_plan)?;
        let failed_release = run.released.unwrap_or_default();
        let (restored, rollback_release) = if self.state.journal.unfinished()?.is_some() {
            let finished = self.resume_settled(Settle::DEFERRED).await?;
            if let Some(n) = finished.release {
                self.ready_and_complete(n).await?;
            }
            (None, finished.release)
        } else {
            self.roll_back(id, failed_release).await?
        };
        on_event(&DeployEvent::Rollback {
            run: id,
            failed_release,
            restored,
            release: rollback_release,
        });
        run.report.restored = restored;
        run.report.rollback_release = rollback_release;
        if restored.is_none() && rollback_release.is_none() {
            run.report.no_rollback = Some(format!(
                "release {failed_release} is the first release: there is nothing to roll back to"
            ));
        }
        let failed = run.report.failed().join(", ");
        let message = if failed.is_empty() {
            "resumed the interrupted rollback".to_string()
        } else {
            format!("check(s) failed: {failed}")
        };
        self.state
            .journal
            .finish_deploy(id, DeployState::Failed, rollback_release, &message)?;
        Ok(done(
            DeployStage::Done,
            match restored {
                Some(r) => format!("release {r}'s objects restored"),
                None => message,
            },
        ))
    }

    /// Wait until release `n`'s objects are ready, then mark it succeeded and record it.
    pub(super) async fn ready_and_complete(&self, n: u64) -> Result<(), EngineError> {
        let release = self
            .state
            .journal
            .release(ReleaseId(n))?
            .ok_or_else(|| EngineError::UnknownRelease(format!("there is no release {n}")))?;
        let plan = self.approved_plan(&release.plan_hash)?;
        if let Some(timeout) = self.wait {
            crate::engine::ready::wait_with(&self.conn, &plan, timeout, self.progress.as_deref())
                .await?;
        }
        self.complete_release(&plan, n).await
    }

    /// Records an error as the run's interruption (it stays resumable) and passes it on.
    pub(super) fn interrupted_on_error<T>(
        &self,
        run: u64,
        result: Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        if let Err(e) = &result {
            let _ = self.state.journal.deploy_interrupted(run, &e.to_string());
        }
        result
    }

    /// Re-applies the succeeded release before `failed_release`: the restored release and the rollback
    /// release (none when nothing was before it).
    pub(super) async fn roll_back(
        &self,
        run: u64,
        failed_release: u64,
    ) -> Result<(Option<u64>, Option<u64>), EngineError> {
        // The newest succeeded release before the failed one (the failed one never succeeded).
        let earlier = self
            .state
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
            let _ = self.state.journal.deploy_interrupted(run, &message);
            EngineError::RollbackFailed(message)
        };
        let plan = self.plan_rollback(Some(earlier)).await.map_err(failed)?;
        let restored = plan.rollback_of;
        let rollback_release = if plan.has_changes() {
            let command = format!(
                "deploy: automatic rollback to release {earlier} (target `{}` sets rollback_on_failed_checks)",
                self.target.name.v
            );
            self.state
                .journal
                .record_approval(&plan.hash, Some(run), ApprovalKind::Rollback, &command)
                .map_err(|e| failed(e.into()))?;
            let applied = self
                .apply_settled(&plan.hash, Settle::DEFERRED)
                .await
                .map_err(failed)?;
            if let Some(n) = applied.release {
                self.ready_and_complete(n).await.map_err(failed)?;
            }
            applied.release
        } else {
            None
        };
        Ok((restored, rollback_release))
    }

    /// Mark release `n` failed after its checks failed (from `running`, or `succeeded` when a resumed
    /// run finds it completed by an earlier attempt).
    pub(super) fn fail_after_checks(&self, n: u64) -> Result<(), EngineError> {
        let release = self.state.journal.release(ReleaseId(n))?;
        match release.map(|r| r.state) {
            Some(ReleaseState::Succeeded) => self
                .state
                .journal
                .fail_release_after_checks(ReleaseId(n))
                .map_err(EngineError::from),
            Some(ReleaseState::Failed) | None => Ok(()),
            Some(_) => self
                .state
                .journal
                .finish_release(ReleaseId(n), ReleaseState::Failed)
                .map_err(EngineError::from),
        }
    }
}
