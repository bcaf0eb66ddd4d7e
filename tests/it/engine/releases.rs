//! Releases after the first apply: resume after a kill at every journal step, rollback, the cluster's record of the live release, diffs, readiness, removed fields, plan-time help.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_at_every_journal_step_resume_converges() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The state an uninterrupted apply reaches.
    let reference = {
        let fx = Fixture::new();
        let session = fx.session(engine_test::app()).await;
        let plan = session.plan(vec![], false).await.expect("plan");
        session.apply(&plan.hash).await.expect("apply");
        cluster_state(&fx.sim).await
    };
    // 1 (release journaled) + 3 per step (started, written, finished) for 6 steps.
    let points = 1 + 3 * 6;
    for kill_at in 0..points {
        let fx = Fixture::new();
        let mut session = fx.session(engine_test::app()).await;
        let plan = session.plan(vec![], false).await.expect("plan");
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        session.set_fault_hook(Some(Arc::new(move |at: &str| {
            // The points before the release is journaled and after it succeeded have tests of their
            // own (tests/it/guarantees.rs): here, every point where a release is running.
            if at == "preconditions checked" || at == "release finished" {
                return true;
            }
            seen.fetch_add(1, Ordering::SeqCst) != kill_at
        })));
        let err = session.apply(&plan.hash).await.expect_err("killed");
        assert!(
            matches!(err, EngineError::Killed(_)),
            "kill point {kill_at}: {err}"
        );

        // A new process: no hook, resume finishes the release.
        let session = fx.session(engine_test::app()).await;
        let resumed = session
            .resume()
            .await
            .unwrap_or_else(|e| panic!("kill point {kill_at}: resume: {e}"));
        assert_eq!(resumed.release, Some(1), "kill point {kill_at}");
        assert_eq!(
            cluster_state(&fx.sim).await,
            reference,
            "kill point {kill_at}: converged"
        );
        let before = resource_versions(&fx.sim).await;
        let again = session.resume().await.expect("second resume");
        assert_eq!(
            (again.release, again.written),
            (None, 0),
            "kill point {kill_at}: nothing left"
        );
        assert_eq!(
            resource_versions(&fx.sim).await,
            before,
            "kill point {kill_at}: a second resume writes nothing"
        );
        let replan = session.plan(vec![], false).await.expect("re-plan");
        assert!(
            !replan.has_changes(),
            "kill point {kill_at}: {:?}",
            actions(&replan)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_restores_the_previous_release() {
    use kube::api::Api;
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let fx = Fixture::new();
    IMAGE.with(|i| *i.borrow_mut() = image("1.27"));
    let session = fx.session(engine_test::app()).await;
    let err = session
        .plan_rollback(None)
        .await
        .expect_err("nothing to roll back to");
    assert!(err.to_string().contains("no earlier release"), "{err}");
    let plan = session.plan(vec![], false).await.expect("plan 1");
    session.apply(&plan.hash).await.expect("release 1");

    IMAGE.with(|i| *i.borrow_mut() = image("1.28"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan 2");
    session.apply(&plan.hash).await.expect("release 2");

    let rollback = session.plan_rollback(None).await.expect("rollback plan");
    assert_eq!(rollback.rollback_of, Some(1));
    let changed: Vec<_> = rollback
        .actions
        .iter()
        .filter(|a| a.changes())
        .map(|a| a.key())
        .collect();
    assert_eq!(changed, ["Deployment/engine/web"]);
    let applied = session
        .apply(&rollback.hash)
        .await
        .expect("apply the rollback");
    assert_eq!(applied.release, Some(3));
    let deploy = Api::<Deployment>::namespaced(fx.sim.client().expect("client"), "engine")
        .get("web")
        .await
        .expect("web");
    let image_now = deploy
        .spec
        .and_then(|s| s.template.spec)
        .map(|p| p.containers[0].image.clone().unwrap_or_default());
    assert_eq!(image_now, Some(image("1.27")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_records_the_live_release() {
    use piceli::runtime::engine::record;
    let fx = Fixture::new();
    let session = fx.session(engine_test::app()).await;
    assert_eq!(
        record::read(session.conn(), "engine-test", "engine")
            .await
            .expect("read"),
        None
    );
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");
    let recorded = record::read(session.conn(), "engine-test", "engine")
        .await
        .expect("read");
    assert_eq!(recorded, Some((1, plan.hash.clone())));
    // The record is not part of the app: the next plan neither shows nor prunes it.
    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(!again.has_changes(), "{:?}", actions(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_between_releases_and_against_the_cluster() {
    use kube::api::{Api, Patch, PatchParams};
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let fx = Fixture::new();
    IMAGE.with(|i| *i.borrow_mut() = image("1.27"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("release 1");
    IMAGE.with(|i| *i.borrow_mut() = image("1.28"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("release 2");

    let diffs = session.diff_releases(1, 2).expect("diff");
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0].object, "Deployment/engine/web");
    assert_eq!(
        diffs[0].diff[0].path,
        "spec.template.spec.containers[web].image"
    );

    // No drift yet; then someone scales the Deployment by hand.
    let drift = session.diff_live(2).await.expect("drift");
    assert!(
        !drift.has_changes(),
        "{:?}",
        drift
            .actions
            .iter()
            .filter(|a| a.changes())
            .map(|a| &a.diff)
            .collect::<Vec<_>>()
    );
    let api: Api<Deployment> = Api::namespaced(fx.sim.client().expect("client"), "engine");
    let patch = serde_json::json!({"spec": {"replicas": 5}});
    api.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("manual change");
    let drift = session.diff_live(2).await.expect("drift");
    let changed: Vec<_> = drift.actions.iter().filter(|a| a.changes()).collect();
    assert_eq!(changed.len(), 1, "{:?}", actions(&drift));
    assert_eq!(changed[0].diff[0].path, "spec.replicas");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_that_never_becomes_ready_is_a_readiness_error() {
    let fx = Fixture::new();
    let session = fx.session(crashing::crash_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    let err = session.apply(&plan.hash).await.expect_err("not ready");
    assert_eq!(err.code().as_str(), "PCL0115", "{err}");
    assert!(err.to_string().contains("progress deadline"), "{err}");
    assert!(
        err.exit_class() == piceli::runtime::ExitClass::Failed,
        "exit 1: it ran but failed"
    );
    // Not ready is not succeeded: the release stays running (resumable), nothing is live yet.
    assert_eq!(
        session
            .state()
            .journal
            .unfinished()
            .expect("journal")
            .map(|r| r.number),
        Some(1)
    );
    assert_eq!(
        session.state().journal.last_succeeded().expect("journal"),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_the_app_stops_declaring_is_removed() {
    use kube::api::Api;
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let fx = Fixture::new();
    let open = |target: &str| {
        let mut opts = fx.options();
        opts.target = Some(target.into());
        opts
    };
    let session = Session::open(fields::fields_test::app(), &open("with-extra"))
        .await
        .expect("session");
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply with EXTRA");
    let session = Session::open(fields::fields_test::app(), &open("without"))
        .await
        .expect("session");
    let plan = session.plan(vec![], false).await.expect("plan");
    // The Deployment loses EXTRA (objects also change their target annotation).
    let web = plan
        .actions
        .iter()
        .find(|a| a.object.kind == "Deployment")
        .expect("web");
    let paths: Vec<&str> = web.diff.iter().map(|c| c.path.as_str()).collect();
    assert!(
        paths.contains(&"spec.template.spec.containers[web].env"),
        "{paths:?}"
    );
    session
        .apply(&plan.hash)
        .await
        .expect("apply without EXTRA");
    let api: Api<Deployment> = Api::namespaced(fx.sim.client().expect("client"), "fields");
    let env = api
        .get("web")
        .await
        .expect("web")
        .spec
        .and_then(|s| s.template.spec)
        .map(|p| p.containers[0].env.clone().unwrap_or_default());
    let names: Vec<String> = env
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, ["MODE"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_the_server_refuses_at_plan_time_has_plan_time_help() {
    use kube::api::{Api, Patch, PatchParams};
    use piceli::k8s_openapi::api::core::v1::ConfigMap;
    let fx = Fixture::new();
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");
    // Another field manager takes over a field the app sets (forcing, as `kubectl apply
    // --server-side --force-conflicts` would): the app's next dry run conflicts with it.
    let api: Api<ConfigMap> = Api::namespaced(fx.sim.client().expect("client"), "engine");
    let theirs = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings"}, "data": {"MODE": "dev"}
    });
    api.patch(
        "settings",
        &PatchParams::apply("someone-else").force(),
        &Patch::Apply(&theirs),
    )
    .await
    .expect("their apply");
    let err = session.plan(vec![], false).await.expect_err("conflict");
    // A conflict is reported field by field with its manager (PCL0147); other dry-run refusals are PCL0153.
    assert_eq!(err.code().as_str(), "PCL0147", "{err}");
    assert!(
        err.to_string()
            .contains("ConfigMap/engine/settings .data.MODE"),
        "{err}"
    );
    assert!(err.to_string().contains("someone-else"), "{err}");
    let help = err.help();
    assert!(help.contains("--take-ownership"), "{help}");
    assert!(
        !help.contains("resume"),
        "apply's help at plan time: {help}"
    );
    assert!(err.exit_class() == piceli::runtime::ExitClass::Rejected);
}
