//! The seed corpus: journals written by the engine's own writers as an apply, a deploy, a kill and a
//! rollback leave them (the plans are the `plan_reader` seeds, re-hashed), dumped in the input format. Run
//! with `PICELI_FUZZ_DUMP_SEEDS=seeds/journal_rows cargo +nightly fuzz run -s none -a journal_rows -- -runs=0`.

use std::path::Path;

use piceli_runtime::engine::plan::Plan;
use piceli_runtime::engine::state::StateDir;
use piceli_runtime::journal::{
    ApprovalKind, CheckRecord, DB_FILE, DeployImage, DeployStage, DeployState, Journal,
    PlannedStep, ReleaseId, ReleaseKind, ReleaseState, StepOutcome,
};

use super::Setup;

const PLANS: [&str; 3] = [
    include_str!("../../seeds/plan_reader/create_update.json"),
    include_str!("../../seeds/plan_reader/rollback_helm.json"),
    include_str!("../../seeds/plan_reader/empty.json"),
];

/// A stored plan (re-hashed) and its steps as `apply` journals them.
fn plan(state: &StateDir, json: &str) -> (String, Vec<PlannedStep>) {
    let mut plan: Plan = serde_json::from_str(json).expect("a plan_reader seed reads");
    plan.hash = plan.compute_hash();
    state.store_plan(&plan).expect("the plan is stored");
    let steps = plan
        .actions
        .iter()
        .map(|a| PlannedStep {
            object: a.key(),
            action: a.action.as_str().to_string(),
            level: a.level,
            desired_digest: a.desired_digest.clone(),
        })
        .collect();
    (plan.hash, steps)
}

fn outcome(ok: bool, n: usize) -> StepOutcome {
    StepOutcome {
        ok,
        detail: if ok {
            "applied".into()
        } else {
            "PCL0130: the API server refused it\n422 Invalid".into()
        },
        uid: Some(format!("0c2f-{n}")),
        resource_version: Some(format!("{}", 40 + n)),
        digest: Some(format!("blake3:{n:064x}")),
    }
}

/// A release of `steps` with the first `done` of them done (and step `done` failed when `fail`).
fn release(
    j: &Journal,
    hash: &str,
    kind: ReleaseKind,
    steps: &[PlannedStep],
    done: usize,
    fail: bool,
) -> ReleaseId {
    let id = j.begin_release(hash, kind, steps).expect("a release");
    for i in 0..steps.len() {
        if i < done {
            j.step_started(id, i as u32).expect("started");
            j.step_finished(id, i as u32, &outcome(true, i))
                .expect("finished");
        } else if i == done {
            j.step_started(id, i as u32).expect("started");
            if fail {
                j.step_finished(id, i as u32, &outcome(false, i))
                    .expect("finished");
            }
        }
    }
    id
}

fn check(name: &str, passed: bool) -> CheckRecord {
    CheckRecord {
        name: name.into(),
        kind: "http".into(),
        passed,
        attempts: if passed { 1 } else { 3 },
        message: if passed {
            "200 OK".into()
        } else {
            "got 503 after 3 attempts".into()
        },
        duration_ms: 1250,
    }
}

fn image(n: usize, unchanged: bool) -> DeployImage {
    DeployImage {
        image: format!("build:api-{n}"),
        reference: format!("127.0.0.1:5000/shop/api@sha256:{n:064x}"),
        destination: "127.0.0.1:5000/shop/api".into(),
        inputs: format!("sha256:{:064x}", n + 7),
        commit: n.is_multiple_of(2).then(|| "4f1d2c3b".into()),
        dirty: n % 2 == 1,
        toolchain: "rustc 1.95.0 (2026-10-01)".into(),
        unchanged,
    }
}

/// Writes each scenario's journal, dumped, into `out`.
pub fn write(setup: &Setup, out: &Path) {
    std::fs::create_dir_all(out).expect("the seed directory");
    type Scenario = fn(&StateDir);
    let scenarios: [(&str, Scenario); 4] = [
        ("applied", |s| {
            let j = &s.journal;
            let (hash, steps) = plan(s, PLANS[0]);
            j.record_approval(
                &hash,
                None,
                ApprovalKind::Approved,
                &format!("apply --approve {}", &hash[..12]),
            )
            .expect("approved");
            let id = release(j, &hash, ReleaseKind::Apply, &steps, steps.len(), false);
            j.finish_release(id, ReleaseState::Succeeded)
                .expect("succeeded");
        }),
        ("killed_mid_apply", |s| {
            let j = &s.journal;
            let (first, steps) = plan(s, PLANS[0]);
            j.record_approval(&first, None, ApprovalKind::Approved, "apply --approve")
                .expect("approved");
            let id = release(j, &first, ReleaseKind::Apply, &steps, steps.len(), false);
            j.finish_release(id, ReleaseState::Succeeded)
                .expect("succeeded");
            let (second, steps) = plan(s, PLANS[1]);
            j.record_approval(&second, None, ApprovalKind::Approved, "apply --approve")
                .expect("approved");
            let id = release(j, &second, ReleaseKind::Apply, &steps, 0, false);
            j.record_backup(id, 0, "Job", Some("shop"), "migrate", "u", &serde_json::json!({
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "migrate", "namespace": "shop", "labels": {"app": "shop"}},
                "spec": {"backoffLimit": 2, "template": {"spec": {"containers": [{"name": "m", "image": "shop/migrate:1.4"}]}}}
            }))
            .expect("a backup");
            j.request_stop().expect("a stop request");
        }),
        ("deployed_checks_failed_rolled_back", |s| {
            let j = &s.journal;
            let (old, steps) = plan(s, PLANS[0]);
            j.record_approval(&old, None, ApprovalKind::Approved, "apply --approve")
                .expect("approved");
            let first = release(j, &old, ReleaseKind::Apply, &steps, steps.len(), false);
            j.finish_release(first, ReleaseState::Succeeded)
                .expect("succeeded");
            let (new, steps) = plan(s, PLANS[1]);
            let run = j
                .begin_deploy(&new, ApprovalKind::Approved, "deploy --approve")
                .expect("a run");
            j.deploy_stage(run, DeployStage::Build, None)
                .expect("build");
            j.record_deploy_images(run, &[image(0, false), image(1, true)])
                .expect("images");
            j.record_build(
                "build:api-0",
                &format!("sha256:{:064x}", 7),
                &format!("sha256:{:064x}", 0),
            )
            .expect("a build");
            j.deploy_stage(run, DeployStage::Apply, None)
                .expect("apply");
            let second = release(j, &new, ReleaseKind::Apply, &steps, steps.len(), false);
            j.finish_release(second, ReleaseState::Succeeded)
                .expect("succeeded");
            j.deploy_stage(run, DeployStage::Checks, Some(second.0))
                .expect("checks");
            j.record_check_results(
                Some(run),
                Some(second.0),
                &[check("up", true), check("orders", false)],
            )
            .expect("checks");
            j.fail_release_after_checks(second)
                .expect("failed after checks");
            j.record_approval(&old, Some(run), ApprovalKind::Rollback, "deploy (rollback)")
                .expect("rollback");
            let (_, steps) = plan(s, PLANS[0]);
            let back = release(j, &old, ReleaseKind::Rollback, &steps, steps.len(), false);
            j.finish_release(back, ReleaseState::Succeeded)
                .expect("succeeded");
            j.finish_deploy(
                run,
                DeployState::Failed,
                Some(back.0),
                "check `orders` failed: got 503",
            )
            .expect("finished");
        }),
        ("deploy_interrupted_failed_step", |s| {
            let j = &s.journal;
            let (hash, steps) = plan(s, PLANS[1]);
            let run = j
                .begin_deploy(&hash, ApprovalKind::Approved, "deploy --approve")
                .expect("a run");
            j.record_deploy_images(run, &[image(2, false)])
                .expect("images");
            j.deploy_stage(run, DeployStage::Apply, None)
                .expect("apply");
            let id = release(j, &hash, ReleaseKind::Apply, &steps, 0, true);
            j.finish_release(id, ReleaseState::Failed).expect("failed");
            j.deploy_interrupted(run, "PCL0115: web is not ready after 300 s")
                .expect("interrupted");
            let (empty, _) = plan(s, PLANS[2]);
            j.begin_deploy(&empty, ApprovalKind::Unchanged, "deploy")
                .expect("an unchanged run");
        }),
    ];
    for (name, scenario) in scenarios {
        let dir = setup.base.join(format!("seed-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        let state = StateDir::open(dir.clone()).expect("a state directory");
        scenario(&state);
        drop(state);
        let rows = super::input::dump(&dir.join(DB_FILE), &setup.tables);
        std::fs::write(out.join(name), rows).expect("a seed file");
    }
    // One edited by hand: a state and a number piceli never writes, constraints off.
    let applied = std::fs::read_to_string(out.join("applied")).expect("the applied seed");
    let edited = format!("!unchecked\n{applied}releases\ti:-3\tt:h\tapply\todd\tx:00ff\t\\N\n");
    std::fs::write(out.join("edited_by_hand"), edited).expect("a seed file");
}
