//! The round trip: the engine's writers record values taken from the input (a plan, a release and its
//! steps, their outcomes, approvals, a deploy run with its images and checks, a backup, the build index,
//! a stop request) in a fresh state directory; every record must read back equal, and a journal only the
//! engine wrote must read without an error.

use piceli_runtime::engine::plan::Plan;
use piceli_runtime::engine::state::StateDir;
use piceli_runtime::identity::ObjectKey;
use piceli_runtime::journal::{
    ApprovalKind, Backup, CheckRecord, CheckResult, DeployImage, DeployRun, DeployStage,
    DeployState, PlannedStep, ReleaseKind, ReleaseState, Seal, Step, StepOutcome, StepState,
};
use rusqlite::types::Value;

use super::Setup;
use super::input::Input;

/// The input's values, handed out in turn (and again from the start when they run out).
struct Pool<'a> {
    values: Vec<&'a Value>,
    at: usize,
}

impl Pool<'_> {
    fn next(&mut self) -> Option<&Value> {
        let v = self.values.get(self.at % self.values.len().max(1)).copied();
        self.at += 1;
        v
    }

    fn text(&mut self) -> String {
        match self.next() {
            Some(Value::Text(t)) => t.clone(),
            Some(Value::Integer(n)) => n.to_string(),
            Some(Value::Real(r)) => r.to_string(),
            Some(Value::Blob(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(Value::Null) | None => String::new(),
        }
    }

    fn opt(&mut self) -> Option<String> {
        let at = self.at;
        match self.next() {
            Some(Value::Null) | None => None,
            _ => {
                self.at = at;
                Some(self.text())
            }
        }
    }

    /// A number the engine could write (at most `i64::MAX`, as SQLite holds them).
    fn number(&mut self) -> u64 {
        match self.next() {
            Some(Value::Integer(n)) => n.unsigned_abs() & i64::MAX as u64,
            Some(Value::Text(t)) => t.len() as u64,
            Some(Value::Blob(b)) => b.len() as u64,
            Some(Value::Real(r)) => *r as u64 & i64::MAX as u64,
            Some(Value::Null) | None => 0,
        }
    }

    fn small(&mut self) -> u32 {
        self.number() as u32
    }

    fn flag(&mut self) -> bool {
        self.number() % 2 == 1
    }

    fn pick<T: Copy>(&mut self, all: &[T]) -> T {
        all[self.number() as usize % all.len()]
    }
}

fn must<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{what} failed on a journal only the engine wrote: {e}"))
}

/// Records values of `input` with the engine's writers and reads each record back.
pub fn run(setup: &Setup, input: &Input) {
    let values = input
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(|c| &c.value));
    let mut pool = Pool {
        values: values.collect(),
        at: 0,
    };
    let dir = super::fresh(setup, "written");
    let state = must("opening", StateDir::open(dir));
    let j = &state.journal;

    // A plan, stored twice (the second a no-op), and one the engine's `Plan` reads.
    let (hash, target, json) = (pool.text(), pool.text(), pool.text());
    must("saving a plan", j.save_plan(&hash, &target, &json));
    must("saving a plan again", j.save_plan(&hash, &target, &json));
    assert_eq!(must("loading", j.load_plan(&hash)), Some(json.clone()));
    if let Ok(mut plan) = serde_json::from_str::<Plan>(&json) {
        plan.hash = plan.compute_hash();
        if plan.hash != hash {
            must("storing a plan", state.store_plan(&plan));
            assert_eq!(
                must("reading a stored plan", state.stored_plan(&plan.hash)),
                plan
            );
        }
    }

    // A release and its steps.
    let count = pool.number() % 6;
    let planned: Vec<PlannedStep> = (0..count)
        .map(|_| PlannedStep {
            object: ObjectKey {
                kind: pool.text(),
                namespace: pool.opt(),
                name: pool.text(),
            },
            action: pool.text(),
            level: pool.small(),
            desired_digest: pool.opt(),
        })
        .collect();
    let kind = pool.pick(ReleaseKind::ALL);
    let id = must(
        "beginning a release",
        j.begin_release(&hash, kind, &planned),
    );
    let mut expected: Vec<Step> = planned
        .iter()
        .enumerate()
        .map(|(i, p)| Step {
            index: i as u32,
            object: p.object.clone(),
            action: p.action.clone(),
            level: p.level,
            desired_digest: p.desired_digest.clone(),
            state: StepState::Pending,
            detail: None,
            uid: None,
            resource_version: None,
            digest: None,
            started_at: None,
            finished_at: None,
        })
        .collect();
    assert_eq!(must("listing steps", j.steps(id)), expected);
    let release = must("reading a release", j.release(id)).expect("the release begun");
    assert_eq!(
        (
            release.plan_hash.as_str(),
            release.kind,
            release.state,
            &release.finished_at
        ),
        (hash.as_str(), kind, ReleaseState::Running, &None)
    );
    assert_eq!(must("unfinished", j.unfinished()), Some(release));
    for (i, step) in expected.iter_mut().enumerate() {
        must("starting a step", j.step_started(id, i as u32));
        step.state = StepState::Started;
        if pool.flag() {
            let outcome = StepOutcome {
                ok: pool.flag(),
                detail: pool.text(),
                uid: pool.opt(),
                resource_version: pool.opt(),
                digest: pool.opt(),
            };
            must("finishing a step", j.step_finished(id, i as u32, &outcome));
            step.state = if outcome.ok {
                StepState::Done
            } else {
                StepState::Failed
            };
            step.detail = Some(outcome.detail);
            step.uid = outcome.uid;
            step.resource_version = outcome.resource_version;
            step.digest = outcome.digest;
        }
    }
    let mut got = must("listing steps", j.steps(id));
    for s in &mut got {
        let finished = matches!(s.state, StepState::Done | StepState::Failed);
        assert!(
            s.started_at.take().is_some(),
            "a started step has no start time"
        );
        assert_eq!(s.finished_at.take().is_some(), finished, "{s:?}");
    }
    assert_eq!(got, expected);
    let done = expected.iter().all(|s| s.state == StepState::Done);
    let end = if done {
        ReleaseState::Succeeded
    } else {
        ReleaseState::Failed
    };
    must("finishing a release", j.finish_release(id, end));
    let release = must("reading a release", j.release(id)).expect("the release");
    assert_eq!(release.state, end);
    assert!(release.finished_at.is_some());
    assert_eq!(must("unfinished", j.unfinished()), None);
    let live = must("last succeeded", j.last_succeeded());
    assert_eq!(live.as_ref(), done.then_some(&release));

    // An approval, then a deploy run with its own.
    let command = pool.text();
    let approval = must(
        "recording an approval",
        j.record_approval(&hash, None, ApprovalKind::Approved, &command),
    );
    let found = must("reading an approval", j.approval(&hash, None)).expect("the approval");
    assert_eq!(
        (
            found.id,
            found.plan_hash.as_str(),
            found.run,
            found.kind,
            found.command.as_str(),
            found.seal
        ),
        (
            approval,
            hash.as_str(),
            None,
            ApprovalKind::Approved,
            command.as_str(),
            Seal::Valid
        )
    );
    let (run_kind, run_command) = (pool.pick(ApprovalKind::ALL), pool.text());
    let run = must(
        "beginning a deploy run",
        j.begin_deploy(&hash, run_kind, &run_command),
    );
    let bound = must("reading an approval", j.approval(&hash, Some(run))).expect("bound");
    assert_eq!(
        (bound.run, bound.kind, bound.command.as_str(), bound.seal),
        (Some(run), run_kind, run_command.as_str(), Seal::Valid)
    );
    assert_eq!(must("reading the approvals", j.approvals()).len(), 2);
    let stage = pool.pick(DeployStage::ALL);
    let made = pool.flag().then_some(id.0);
    must("recording a stage", j.deploy_stage(run, stage, made));
    let message = pool.text();
    must(
        "recording an interruption",
        j.deploy_interrupted(run, &message),
    );
    let open = must("unfinished deploy", j.unfinished_deploy()).expect("the running deploy");
    let mut want = DeployRun {
        id: run,
        plan_hash: hash.clone(),
        stage,
        state: DeployState::Running,
        release: made,
        rollback_release: None,
        message,
        started_at: open.started_at.clone(),
        finished_at: None,
    };
    assert_eq!(open, want);
    let images: Vec<DeployImage> = (0..pool.number() % 4)
        .map(|_| DeployImage {
            image: pool.text(),
            reference: pool.text(),
            destination: pool.text(),
            inputs: pool.text(),
            commit: pool.opt(),
            dirty: pool.flag(),
            toolchain: pool.text(),
            unchanged: pool.flag(),
        })
        .collect();
    must("recording images", j.record_deploy_images(run, &images));
    assert_eq!(must("reading images", j.deploy_images(run)), images);
    let records: Vec<CheckRecord> = (0..1 + pool.number() % 3)
        .map(|_| CheckRecord {
            name: pool.text(),
            kind: pool.text(),
            passed: pool.flag(),
            attempts: pool.small(),
            message: pool.text(),
            duration_ms: pool.number(),
        })
        .collect();
    must(
        "recording checks",
        j.record_check_results(Some(run), Some(id.0), &records),
    );
    let mut last = must("reading checks", j.last_check_results());
    for r in &mut last {
        assert!(r.finished_at.ends_with('Z'), "{}", r.finished_at);
        r.finished_at.clear();
    }
    let want_checks: Vec<CheckResult> = records
        .iter()
        .map(|r| CheckResult {
            name: r.name.clone(),
            kind: r.kind.clone(),
            passed: r.passed,
            attempts: r.attempts,
            message: r.message.clone(),
            release: Some(id.0),
            finished_at: String::new(),
        })
        .collect();
    assert_eq!(last, want_checks);
    let passed = records.iter().filter(|r| r.passed).count() as u32;
    let outcomes = must("check outcomes", j.check_outcomes());
    assert_eq!(outcomes.get(&id.0), Some(&(passed, records.len() as u32)));
    let (end, rollback, message) = (
        pool.pick(DeployState::ALL),
        pool.flag().then_some(id.0),
        pool.text(),
    );
    must(
        "finishing a deploy",
        j.finish_deploy(run, end, rollback, &message),
    );
    let done = must("listing deploy runs", j.deploy_runs()).remove(0);
    assert!(done.finished_at.is_some());
    want.stage = DeployStage::Done;
    want.state = end;
    want.rollback_release = rollback;
    want.message = message;
    want.finished_at = done.finished_at.clone();
    assert_eq!(done, want);

    // A backup: an object the input holds as JSON, else its text as a JSON string.
    let text = pool.text();
    let object = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    let (step, kind, namespace, name, uid) = (
        pool.small(),
        pool.text(),
        pool.opt(),
        pool.text(),
        pool.text(),
    );
    must(
        "recording a backup",
        j.record_backup(id, step, &kind, namespace.as_deref(), &name, &uid, &object),
    );
    let mut backups = must("reading backups", j.backups(Some(id)));
    assert_eq!(backups.len(), 1);
    let backup = backups.remove(0);
    let want = Backup {
        release: id.0,
        step,
        kind,
        namespace,
        name,
        uid,
        object,
        taken_at: backup.taken_at.clone(),
    };
    assert_eq!(backup, want, "a backup reads back changed");

    // The build index and a stop request.
    let (image, inputs, digest) = (pool.text(), pool.text(), pool.text());
    must(
        "recording a build",
        j.record_build(&image, &inputs, &digest),
    );
    assert_eq!(
        must("reading a build", j.built(&image, &inputs)),
        Some(digest)
    );
    must("requesting a stop", j.request_stop());
    assert!(must("reading a stop", j.stop_requested()));
    must("clearing a stop", j.clear_stop());
    assert!(!must("reading a stop", j.stop_requested()));

    assert_eq!(
        super::read_all(&state),
        0,
        "a journal only the engine wrote fails to read"
    );
}
