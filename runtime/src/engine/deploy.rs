//! `deploy`'s events, options and report, and `check`. The stage machine itself is in
//! [`super::stages`]: inputs → build → plan → approve → deliver → apply → ready → checks (→ rollback), one
//! journaled run that `deploy --resume` continues from the stage it reached.
//!
//! A plan with no changes needs no approval: nothing is applied, readiness is confirmed and the checks
//! run (so changing only a check runs the checks without writing anything).

use super::error::EngineError;
use super::plan::{ActionKind, Plan};
use super::session::Session;
use crate::checks::{self, CheckContext, CodeCheck, Outcome};
use crate::images::{BuildOptions, ImageEvent};
use serde::Serialize;
use std::sync::Arc;

/// One step of a deploy, as it happens (`-o json` prints each as a JSON line).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DeployEvent {
    /// A stage ended: done, or skipped because its inputs are unchanged (or there is nothing to do).
    Stage {
        /// The run (`None` before one is journaled: a plan that still needs approval).
        run: Option<u64>,
        /// `inputs`, `build`, `plan`, `approve`, `deliver`, `apply`, `ready`, `checks` or `rollback`.
        stage: &'static str,
        /// `done`, `skipped`, or `waiting` (approve: the plan needs `--approve HASH`).
        outcome: &'static str,
        /// What it did, or why it was skipped.
        detail: String,
        /// How long it took.
        ms: u64,
    },
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
        /// Each field an update changes, as `Kind/namespace/name: path` (a new image:
        /// `Deployment/shop/api: spec.template.spec.containers[api].image`).
        fields: Vec<String>,
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
    /// An image stage's event (`inputs`, `build`, `deliver`), with its own `event` name.
    #[serde(untagged)]
    Image(ImageEvent),
}

impl DeployEvent {
    pub(super) fn check(run: Option<u64>, o: &Outcome) -> DeployEvent {
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
    /// Where the images the app builds come from and go (`None`: the app's `build(…)` images are not
    /// built; they stay placeholders).
    pub images: Option<BuildOptions>,
}

/// Whether `--approve GIVEN` approves the plan `hash`: the whole hash, or a prefix of at least 12 digits.
pub(super) fn approves(given: &str, hash: &str) -> bool {
    let given = given.trim().to_ascii_lowercase();
    given.len() >= super::approved::MIN_PREFIX && hash.starts_with(&given)
}

pub(super) fn plan_event(plan: &Plan) -> DeployEvent {
    let count =
        |f: &dyn Fn(&ActionKind) -> bool| plan.actions.iter().filter(|a| f(&a.action)).count();
    DeployEvent::Plan {
        hash: plan.hash.clone(),
        changes: plan.has_changes(),
        create: count(&|k| *k == ActionKind::Create),
        update: count(&|k| {
            matches!(
                k,
                ActionKind::Update | ActionKind::Adopt | ActionKind::Replace
            )
        }),
        delete: count(&|k| *k == ActionKind::Delete),
        unchanged: count(&|k| matches!(k, ActionKind::Unchanged | ActionKind::Use)),
        warnings: plan.requires.iter().filter_map(|r| r.warning()).collect(),
        fields: plan
            .actions
            .iter()
            .flat_map(|a| {
                a.diff
                    .iter()
                    .map(move |c| format!("{}: {}", a.key(), c.path))
            })
            .collect(),
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

    pub(super) fn check_context(&self, release: Option<u64>) -> CheckContext {
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
        self.state
            .journal
            .record_check_results(None, release, &records)?;
        Ok(DeployReport {
            release,
            checks: outcomes,
            ..DeployReport::default()
        })
    }
}
