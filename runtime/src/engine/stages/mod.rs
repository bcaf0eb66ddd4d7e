//! `deploy` as a stage machine: `stage = step(stage)` over inputs → build → plan → approve → deliver →
//! apply → ready → checks (→ rollback), each stage journaled (the run's `stage`, a stored enum) once the
//! run exists, and `deploy --resume` loading the stage and entering the same loop.
//!
//! The run is journaled from its first stage when `--approve` names a stored plan (so a kill while
//! building resumes), else from the approval; either way with its approval bound to it in the journal
//! (`approved`, or `unchanged` for a plan that changes and pushes nothing). Nothing is pushed or applied
//! before `approve`: the plan shows every built image's digest and its hash covers them, and a plan that
//! changes no object but has an image to push (the registry lost it) needs approval too — the push is
//! part of what is approved. `deliver` pushes only under an approval that allows it, only references the
//! approved plan runs, with content that hashes to them. A resumed run needs its recorded approval
//! (PCL0124), and uses the journal's approved plan (verified against its hash) and the journal's images,
//! never `images.json`. Interrupted before `deliver`, a run resumes at `inputs` (their results are not
//! kept mid-stage; the build cache keeps what was built). After a run succeeds, the build cache keeps only
//! the images of the running and the live release.

use std::collections::BTreeSet;
use std::time::Instant;

use super::deploy::{DeployEvent, DeployOptions, DeployReport, approves, plan_event};
use super::error::EngineError;
use super::plan::Plan;
use super::session::{Session, Settle};
use crate::checks::{self, CodeCheck, Outcome};
use crate::images::{self, BuildOptions, ImageInputs, Prepared};
use crate::journal::{ApprovalKind, DeployStage, DeployState, ReleaseId, ReleaseState};
use piceli_core::model::App;

mod finish;

/// What a run carries from stage to stage.
struct RunState {
    /// The journaled run (`None` until it is begun).
    id: Option<u64>,
    /// When it began (to find the release it made).
    started_at: String,
    /// The plan hash the journaled run carries out.
    plan_hash: Option<String>,
    /// `--approve HASH` as given.
    approve: Option<String>,
    /// The app as declared (placeholders for built images).
    declared: App,
    /// Where images come from and go.
    build: BuildOptions,
    inputs: Vec<ImageInputs>,
    prepared: Prepared,
    plan: Option<Plan>,
    /// The release this run made.
    released: Option<u64>,
    report: DeployReport,
}

/// How a stage ended, and the next one.
struct Step {
    next: DeployStage,
    outcome: &'static str,
    detail: String,
}

fn done(next: DeployStage, detail: impl Into<String>) -> Step {
    Step {
        next,
        outcome: "done",
        detail: detail.into(),
    }
}

fn skipped(next: DeployStage, detail: impl Into<String>) -> Step {
    Step {
        next,
        outcome: "skipped",
        detail: detail.into(),
    }
}

/// Where a resumed run re-enters: before `deliver` from the start (nothing was pushed or applied).
fn resume_point(stage: DeployStage) -> DeployStage {
    match stage {
        DeployStage::Inputs | DeployStage::Build | DeployStage::Plan | DeployStage::Approve => {
            DeployStage::Inputs
        }
        other => other,
    }
}

/// Every container image the plan's objects run (`…image` string fields).
fn plan_images(plan: &Plan) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("image", serde_json::Value::String(s)) => {
                            out.insert(s.clone());
                        }
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    plan.objects.iter().for_each(|o| walk(o, &mut out));
    out
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Session {
    /// `deploy`: see the module docs. Readiness waits use the session's `wait` (none: no wait).
    pub async fn deploy(
        &mut self,
        opts: &DeployOptions,
        code: &[CodeCheck],
        mut on_event: impl FnMut(&DeployEvent),
    ) -> Result<DeployReport, EngineError> {
        // A kill between the journal's `succeeded` and the cluster's record lost the record: repair it.
        self.repair_record().await?;
        let mut build = opts.images.clone().unwrap_or_default();
        build.state_dir = self.state.path.clone();
        let mut run = RunState {
            id: None,
            started_at: String::new(),
            plan_hash: None,
            approve: opts.approve.clone(),
            declared: self.app.clone(),
            build,
            inputs: Vec::new(),
            prepared: Prepared::default(),
            plan: None,
            released: None,
            report: DeployReport::default(),
        };
        let mut stage = if opts.resume {
            let Some(found) = self.state.journal.unfinished_deploy()? else {
                return Ok(DeployReport::default());
            };
            on_event(&DeployEvent::Resume {
                run: found.id,
                stage: found.stage.as_str(),
            });
            // Only a run whose plan an approval bound to it covers (never one pointed at another plan).
            self.require_approval(
                &format!("deploy run {}", found.id),
                &found.plan_hash,
                Some(found.id),
            )?;
            run.id = Some(found.id);
            run.started_at = found.started_at;
            run.released = found.release;
            run.approve = Some(found.plan_hash.clone());
            run.plan_hash = Some(found.plan_hash.clone());
            let stage = resume_point(found.stage);
            if stage != DeployStage::Inputs {
                self.load_approved(&mut run, &found.plan_hash)?;
                if let Some(plan) = &run.plan {
                    on_event(&plan_event(plan));
                }
            }
            stage
        } else {
            // An approval naming a stored plan, with no release running: journaled from the first stage.
            if let Some((given, hash)) = opts
                .approve
                .as_deref()
                .and_then(|given| Some((given, self.resolve_hash(given).ok()?)))
                && self.state.journal.unfinished()?.is_none()
            {
                let command = format!("deploy --approve {}", given.trim());
                self.begin_run(&mut run, &hash, ApprovalKind::Approved, &command)?;
            }
            DeployStage::Inputs
        };
        while stage != DeployStage::Done {
            if let Some(id) = run.id {
                self.state.journal.deploy_stage(id, stage, run.released)?;
            }
            let started = Instant::now();
            let step = self.step(stage, &mut run, code, &mut on_event).await;
            let step = match run.id {
                Some(id) => self.interrupted_on_error(id, step)?,
                None => step?,
            };
            on_event(&DeployEvent::Stage {
                run: run.id,
                stage: stage.as_str(),
                outcome: step.outcome,
                detail: step.detail,
                ms: millis(started),
            });
            stage = step.next;
        }
        run.report.run = run.id;
        Ok(run.report)
    }

    /// One stage: what it does, and the stage after it.
    async fn step(
        &mut self,
        stage: DeployStage,
        run: &mut RunState,
        code: &[CodeCheck],
        on_event: &mut dyn FnMut(&DeployEvent),
    ) -> Result<Step, EngineError> {
        let mut image_event = |e: &images::ImageEvent| on_event(&DeployEvent::Image(e.clone()));
        match stage {
            DeployStage::Inputs => {
                if run.declared.builds.is_empty() {
                    return Ok(skipped(DeployStage::Build, "the app builds no images"));
                }
                run.inputs =
                    images::read_inputs(&run.declared, &self.target, &run.build, &mut image_event)
                        .await?;
                let unchanged = run.inputs.iter().filter(|i| i.unchanged.is_some()).count();
                Ok(done(
                    DeployStage::Build,
                    format!(
                        "{} image(s), {unchanged} unchanged since their last delivery",
                        run.inputs.len()
                    ),
                ))
            }
            DeployStage::Build => {
                if run.inputs.is_empty() {
                    return Ok(skipped(DeployStage::Plan, "the app builds no images"));
                }
                let inputs = std::mem::take(&mut run.inputs);
                let prepared =
                    images::build(inputs, &run.build, &self.state.journal, &mut image_event)
                        .await?;
                super::apply::checkpoint(self.fault_hook.as_deref(), "images built")?;
                self.app = prepared.substitute(run.declared.clone());
                run.prepared = prepared;
                if let Some(id) = run.id {
                    self.state
                        .journal
                        .record_deploy_images(id, &run.prepared.records())?;
                }
                let built = run.prepared.built_now();
                Ok(if built == 0 {
                    skipped(
                        DeployStage::Plan,
                        "inputs unchanged: nothing built (delivered or in the build cache)",
                    )
                } else {
                    done(DeployStage::Plan, format!("{built} image(s) built"))
                })
            }
            DeployStage::Plan => {
                let plan = self.plan(Vec::new(), false).await?;
                on_event(&plan_event(&plan));
                let detail = format!("{} ({} object(s))", plan.hash, plan.actions.len());
                run.plan = Some(plan);
                Ok(done(DeployStage::Approve, detail))
            }
            DeployStage::Approve => self.approve_stage(run),
            DeployStage::Deliver => {
                let plan = run.plan.as_ref().ok_or_else(missing_plan)?;
                if run.prepared.images.is_empty() {
                    return Ok(skipped(DeployStage::Apply, "no images to deliver"));
                }
                let approved = plan_images(plan);
                if !run.prepared.unchanged() {
                    // Pushing needs an approval that allows it, bound to this run.
                    let id = run.id.ok_or_else(missing_plan)?;
                    let approval =
                        self.require_approval(&format!("deploy run {id}"), &plan.hash, Some(id))?;
                    if !approval.kind.allows_writes() {
                        return Err(EngineError::NotApproved {
                            what: format!("deploy run {id}'s delivery"),
                            hash: plan.hash.clone(),
                            run: Some(id),
                        });
                    }
                }
                super::apply::checkpoint(self.fault_hook.as_deref(), "delivering")?;
                for idx in 0..run.prepared.images.len() {
                    run.prepared
                        .deliver_image(idx, &approved, &mut image_event)
                        .await?;
                    super::apply::checkpoint(self.fault_hook.as_deref(), "image delivered")?;
                }
                Ok(if run.prepared.unchanged() {
                    skipped(DeployStage::Apply, "images unchanged: nothing pushed")
                } else {
                    done(
                        DeployStage::Apply,
                        format!("{} image(s) delivered", run.prepared.images.len()),
                    )
                })
            }
            DeployStage::Apply => self.apply_stage(run, on_event).await,
            DeployStage::Ready => {
                let plan = run.plan.as_ref().ok_or_else(missing_plan)?;
                let started = Instant::now();
                if let Some(timeout) = self.wait {
                    super::ready::wait_with(&self.conn, plan, timeout, self.progress.as_deref())
                        .await?;
                }
                on_event(&DeployEvent::Ready {
                    run: run.id.unwrap_or_default(),
                    waited_ms: millis(started),
                });
                Ok(match self.wait {
                    Some(_) => done(DeployStage::Checks, "every workload is ready"),
                    None => skipped(DeployStage::Checks, "no readiness wait (--timeout 0)"),
                })
            }
            DeployStage::Checks => self.checks_stage(run, code, on_event).await,
            DeployStage::Rollback => self.rollback_stage(run, on_event).await,
            DeployStage::Done => Ok(skipped(DeployStage::Done, "")),
        }
    }

    /// A resumed run past `approve`: its approved plan (verified) and the images it delivers.
    fn load_approved(&mut self, run: &mut RunState, hash: &str) -> Result<(), EngineError> {
        run.plan = Some(self.approved_plan(hash)?);
        if let Some(id) = run.id {
            let records = self.state.journal.deploy_images(id)?;
            run.prepared = Prepared::from_records(&records, &run.build)?;
            if !records.is_empty() {
                self.app = run.prepared.substitute(run.declared.clone());
            }
        }
        Ok(())
    }

    fn begin_run(
        &self,
        run: &mut RunState,
        hash: &str,
        kind: ApprovalKind,
        command: &str,
    ) -> Result<(), EngineError> {
        let id = self.state.journal.begin_deploy(hash, kind, command)?;
        run.id = Some(id);
        run.plan_hash = Some(hash.to_string());
        run.started_at = self
            .state
            .journal
            .unfinished_deploy()?
            .map(|r| r.started_at)
            .unwrap_or_default();
        Ok(())
    }

    /// `approve`: a plan with changes — or with an image to push — goes on only with its hash approved; the
    /// run is journaled from here at the latest.
    fn approve_stage(&self, run: &mut RunState) -> Result<Step, EngineError> {
        let plan = run.plan.as_ref().ok_or_else(missing_plan)?;
        let hash = plan.hash.clone();
        let pushes = run.prepared.pushes();
        let changes = plan.has_changes() || pushes > 0;
        run.report.hash = Some(hash.clone());
        if changes {
            let approved = run.plan_hash.as_deref().or(run.approve.as_deref());
            match approved {
                None => {
                    run.report.approval_required = true;
                    let what = if plan.has_changes() {
                        "the plan has changes".to_string()
                    } else {
                        format!(
                            "the plan changes no object, but {pushes} image(s) it runs must be pushed (their destination lacks them)"
                        )
                    };
                    return Ok(Step {
                        next: DeployStage::Done,
                        outcome: "waiting",
                        detail: format!("{what}: approve with `--approve {hash}`"),
                    });
                }
                Some(given) if !approves(given, &hash) => {
                    let given = run.approve.clone().unwrap_or_else(|| given.to_string());
                    let stale = matches!(self.resolve_hash(&given), Ok(h) if h != hash);
                    if let Some(id) = run.id {
                        let message = format!("the plan is now {hash}, not the approved {given}");
                        self.state.journal.finish_deploy(
                            id,
                            DeployState::Failed,
                            None,
                            &message,
                        )?;
                        run.id = None;
                    }
                    return Err(EngineError::ApprovalMismatch {
                        planned: hash,
                        approved: given,
                        stale,
                    });
                }
                Some(_) => {}
            }
            if let Some(running) = self.state.journal.unfinished()? {
                return Err(EngineError::ReleaseRunning(running.number));
            }
        }
        let (kind, command) = match (changes, run.approve.as_deref()) {
            (true, Some(given)) => (
                ApprovalKind::Approved,
                format!("deploy --approve {}", given.trim()),
            ),
            _ => (
                ApprovalKind::Unchanged,
                "deploy (no changes, no push: nothing to approve)".to_string(),
            ),
        };
        match run.id {
            None => self.begin_run(run, &hash, kind, &command)?,
            Some(id) if run.plan_hash.as_deref() != Some(hash.as_str()) => {
                self.state
                    .journal
                    .deploy_replan(id, &hash, kind, &command)?;
                run.plan_hash = Some(hash.clone());
            }
            Some(_) => {}
        }
        if let Some(id) = run.id {
            self.state
                .journal
                .record_deploy_images(id, &run.prepared.records())?;
        }
        Ok(if changes {
            done(DeployStage::Deliver, format!("{hash} approved"))
        } else {
            skipped(DeployStage::Deliver, "no changes: nothing to approve")
        })
    }
}

fn missing_plan() -> EngineError {
    EngineError::StateDir("the deploy run reached a stage without its plan or run".into())
}
