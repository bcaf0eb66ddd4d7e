//! Approvals are sealed with the approving user's key, kept outside the state directory: someone who can
//! edit the state directory — the journal, the stored plans, the secret-digest key — but not that key
//! cannot make `resume` or `deploy --resume` carry out a plan nobody approved (PCL0220), where the cluster's
//! apply Lease records nothing to compare with (a finished release, a deploy run before its apply stage).
//! A genuine approval, given by this user, still resumes.

use crate::engine_fixture;

use engine_fixture::*;
use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use rusqlite::params;
use std::path::Path;

/// What the planter stores after a first release succeeded: the plan `hash` with the Deployment's image
/// replaced, rehashed and stored under its new hash (a plan whose content matches its hash).
fn plant_plan(state: &Path, hash: &str, evil: &str) -> String {
    let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
    let release: (String, String) = db
        .query_row(
            "SELECT plan_hash, state FROM releases WHERE number = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("release 1");
    assert_eq!(release, (hash.to_string(), "succeeded".to_string()));
    drop(db);
    // `tamper` moves release 1 onto the new plan; it is put back below.
    let planted = tamper(state, hash, evil, true);
    let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
    db.execute(
        "UPDATE releases SET plan_hash = ?1 WHERE number = 1",
        params![hash],
    )
    .expect("release 1 as it was");
    planted
}

/// An approval row for `plan` (bound to `run`), as a planter writes it: with the seal of the newest
/// genuine row (`copy_seal`), or with none.
fn plant_approval(state: &Path, plan: &str, run: Option<u64>, copy_seal: bool) {
    let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
    db.execute(
        "INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at, seal) \
         SELECT ?1, ?2, 'approved', 'apply --approve ' || ?1, approved_at, \
                CASE WHEN ?3 THEN seal END \
         FROM approvals ORDER BY id DESC LIMIT 1",
        params![plan, run, copy_seal],
    )
    .expect("plant an approval");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_a_release_and_approval_planted_in_the_journal() {
    for copy_seal in [false, true] {
        let fx = Fixture::new();
        let opts = fx.options("a");
        let session = fx.session(&opts).await;
        let plan = session.plan(vec![], false).await.expect("plan");
        let applied = session.apply(&plan.hash).await.expect("apply");
        assert_eq!(applied.release, Some(1));
        drop(session);

        // A running release 2 of a planted plan, its steps pending, and an approval of that plan. The
        // cluster's Lease records no running release (release 1 finished), so only the seal stands.
        let state = fx.state("a");
        let planted = plant_plan(&state, &plan.hash, &image("evil"));
        let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
        db.execute(
            "INSERT INTO releases (number, plan_hash, kind, state, started_at) \
             SELECT 2, ?1, 'apply', 'running', started_at FROM releases WHERE number = 1",
            params![planted],
        )
        .expect("plant a release");
        db.execute(
            "INSERT INTO steps (release, idx, kind, namespace, name, action, level, desired_digest, \
             state) SELECT 2, idx, kind, namespace, name, 'update', level, desired_digest, 'pending' \
             FROM steps WHERE release = 1",
            [],
        )
        .expect("plant its steps");
        plant_approval(&state, &planted, None, copy_seal);
        drop(db);

        let session = fx.session(&opts).await;
        let err = session.resume().await.expect_err("a planted approval");
        assert!(
            matches!(err, EngineError::ApprovalUnsealed { .. }),
            "copy_seal {copy_seal}: {err}"
        );
        assert_eq!(err.code().as_str(), "PCL0220", "{err}");
        assert!(err.to_string().contains("release 2"), "{err}");
        assert!(err.help().contains("--approve"), "{}", err.help());
        assert_eq!(
            deployment_image(&fx.sim, "g-one").await,
            Some(image("1.27")),
            "copy_seal {copy_seal}: the planted image was never written"
        );
        let release = session
            .state()
            .journal
            .unfinished()
            .expect("journal")
            .expect("release 2 is kept, not marked done");
        assert_eq!(release.number, 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_resume_refuses_a_run_and_approval_planted_in_the_journal() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    let approve = deploy_options(Some(plan.hash.clone()), false);
    let report = session.deploy(&approve, &[], |_| {}).await.expect("deploy");
    assert_eq!(report.release, Some(1));
    drop(session);

    // A deploy run at its apply stage carrying out a planted plan, with an approval bound to it.
    let state = fx.state("a");
    let planted = plant_plan(&state, &plan.hash, &image("evil"));
    let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
    db.execute(
        "INSERT INTO deploy_runs (plan_hash, stage, state, started_at) \
         SELECT ?1, 'apply', 'running', started_at FROM deploy_runs ORDER BY id DESC LIMIT 1",
        params![planted],
    )
    .expect("plant a run");
    let run = db.last_insert_rowid() as u64;
    drop(db);
    plant_approval(&state, &planted, Some(run), true);

    let mut session = fx.session(&opts).await;
    let resume = deploy_options(None, true);
    let err = session
        .deploy(&resume, &[], |_| {})
        .await
        .expect_err("a planted approval");
    assert_eq!(err.code().as_str(), "PCL0220", "{err}");
    assert!(
        err.to_string().contains(&format!("deploy run {run}")),
        "{err}"
    );
    assert_eq!(
        deployment_image(&fx.sim, "g-one").await,
        Some(image("1.27"))
    );
    assert_eq!(
        session.state().journal.releases().expect("releases").len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genuine_approval_still_resumes_after_a_kill() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.set_fault_hook(Some(kill_at("step 1 started")));
    let err = session.apply(&plan.hash).await.expect_err("killed");
    assert!(matches!(err, EngineError::Killed(_)), "{err}");
    drop(session);
    let session = fx.session(&opts).await;
    let approval = session
        .state()
        .journal
        .approval(&plan.hash, None)
        .expect("journal")
        .expect("the approval apply recorded");
    assert!(approval.sealed(), "{approval:?}");
    let resumed = session.resume().await.expect("resume");
    assert_eq!(resumed.release, Some(1));
    assert_eq!(
        deployment_image(&fx.sim, "g-one").await,
        Some(image("1.27"))
    );
}
