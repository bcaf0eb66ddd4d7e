//! Kills, lost connections, outages and racing writers: what recovers and what is refused.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_before_the_release_is_journaled_leaves_nothing_to_resume() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.set_fault_hook(Some(kill_at("preconditions checked")));
    assert!(matches!(
        session.apply(&plan.hash).await,
        Err(EngineError::Killed(_))
    ));
    drop(session);
    let session = fx.session(&opts).await;
    let resumed = session.resume().await.expect("resume");
    assert_eq!(resumed.release, None, "nothing to resume");
    // The same hash can be approved again.
    let applied = session.apply(&plan.hash).await.expect("approved again");
    assert_eq!(applied.release, Some(1));
    // Once more, its objects exist: made by this app, not "someone else".
    let err = session.apply(&plan.hash).await.expect_err("stale");
    assert!(matches!(err, EngineError::Precondition { .. }), "{err}");
    assert!(err.to_string().contains("an apply of this app"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_resume_after_a_kill_before_the_release_finishes_the_run() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.set_fault_hook(Some(kill_at("preconditions checked")));
    let deploy = deploy_options(Some(plan.hash.clone()), false);
    let err = session
        .deploy(&deploy, &[], |_| {})
        .await
        .expect_err("killed");
    assert!(matches!(err, EngineError::Killed(_)), "{err}");
    drop(session);
    let mut session = fx.session(&opts).await;
    let resume = deploy_options(None, true);
    let report = session
        .deploy(&resume, &[], |_| {})
        .await
        .expect("deploy --resume finishes the run");
    assert_eq!(report.release, Some(1));
    assert_eq!(
        deployment_image(&fx.sim, "g-one").await,
        Some(image("1.27"))
    );
    let again = session.deploy(&resume, &[], |_| {}).await.expect("again");
    assert_eq!(again.run, None, "nothing left to resume");
    assert!(
        !session
            .plan(vec![], false)
            .await
            .expect("plan")
            .has_changes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_release_record_is_repaired() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.set_fault_hook(Some(kill_at("release finished")));
    assert!(matches!(
        session.apply(&plan.hash).await,
        Err(EngineError::Killed(_))
    ));
    drop(session);
    let session = fx.session(&opts).await;
    let read = || piceli::runtime::engine::record::read(session.conn(), "guard-test", "g-one");
    assert_eq!(
        read().await.expect("read"),
        None,
        "the kill lost the record"
    );
    let resumed = session.resume().await.expect("resume");
    assert_eq!(resumed.release, None);
    assert_eq!(
        read().await.expect("read"),
        Some((1, plan.hash.clone())),
        "resume repaired it"
    );

    // `check` repairs it too (deleted by hand, as a teammate might).
    use piceli::k8s_openapi::api::core::v1::ConfigMap;
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(session.conn().client.clone(), "g-one");
    cms.delete("piceli-release-guard-test", &Default::default())
        .await
        .expect("delete record");
    session.check(&[], |_| {}).await.expect("check");
    assert_eq!(read().await.expect("read"), Some((1, plan.hash.clone())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_asked_while_nothing_runs_does_not_halt_the_next_apply() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let session = fx.session(&opts).await;
    session.state().journal.request_stop().expect("stop");
    let plan = session.plan(vec![], false).await.expect("plan");
    let applied = session.apply(&plan.hash).await.expect("not halted");
    assert_eq!(applied.release, Some(1));
    assert!(!session.state().journal.stop_requested().expect("journal"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_connection_leaves_the_release_resumable() {
    let fx = Fixture::new();
    let proxy = Arc::new(Proxy::start(fx.sim.addr()).await);
    let kubeconfig = proxy.kubeconfig(&fx.sim, fx.dirs.path());
    let opts = fx.options_with("a", &kubeconfig);
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");

    // The network goes away for good after the first object was written.
    let p = proxy.clone();
    session.set_fault_hook(Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.set_cut(true);
        }
        true
    })));
    let err = session.apply(&plan.hash).await.expect_err("interrupted");
    assert!(matches!(err, EngineError::Interrupted(_)), "{err}");
    assert_eq!(err.code().as_str(), "PCL0143");
    let running = session.state().journal.unfinished().expect("journal");
    assert_eq!(
        running.map(|r| r.number),
        Some(1),
        "the release stays running"
    );
    drop(session);

    // It comes back: resume finishes the release.
    proxy.set_cut(false);
    let session = fx.session(&opts).await;
    let resumed = session.resume().await.expect("resume");
    assert_eq!(resumed.release, Some(1));
    assert!(
        !session
            .plan(vec![], false)
            .await
            .expect("plan")
            .has_changes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_outage_is_ridden_out_by_retries() {
    let fx = Fixture::new();
    let proxy = Arc::new(Proxy::start(fx.sim.addr()).await);
    let kubeconfig = proxy.kubeconfig(&fx.sim, fx.dirs.path());
    let opts = fx.options_with("a", &kubeconfig);
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    let p = proxy.clone();
    session.set_fault_hook(Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.set_cut(true);
            let back = p.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(700));
                back.set_cut(false);
            });
        }
        true
    })));
    let applied = session
        .apply(&plan.hash)
        .await
        .expect("applied despite the outage");
    assert_eq!(applied.release, Some(1));
    assert!(
        session
            .state()
            .journal
            .unfinished()
            .expect("journal")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_someone_else_made_is_used_as_it_is() {
    use piceli::k8s_openapi::api::core::v1::Namespace;
    use piceli::runtime::engine::plan::ActionKind;
    let fx = Fixture::new();
    let namespaces: kube::Api<Namespace> = kube::Api::all(fx.sim.client().expect("client"));
    let made: Namespace = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "g-one", "labels": { "team": "platform" } }
    }))
    .expect("namespace");
    namespaces
        .create(&Default::default(), &made)
        .await
        .expect("the platform team's namespace");
    let session = fx.session(&fx.options("a")).await;
    let plan = session.plan(vec![], false).await.expect("no PCL0108");
    let ns = plan
        .actions
        .iter()
        .find(|a| a.object.kind == "Namespace")
        .expect("namespace action");
    assert_eq!(ns.action, ActionKind::Use);
    session.apply(&plan.hash).await.expect("apply");
    let live = namespaces.get("g-one").await.expect("namespace");
    let labels = live.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("platform"));
    assert!(
        !labels.contains_key("app.kubernetes.io/managed-by"),
        "{labels:?}"
    );
    assert!(
        !live
            .metadata
            .managed_fields
            .unwrap_or_default()
            .iter()
            .any(|m| m.manager.as_deref() == Some("piceli")),
        "never written"
    );
    // The platform team relabels it: still used as is, not a change, not a refusal.
    let patch = serde_json::json!({ "metadata": { "labels": { "cost-center": "42" } } });
    namespaces
        .patch(
            "g-one",
            &Default::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .expect("relabel");
    let again = session.plan(vec![], false).await.expect("plan");
    assert!(!again.has_changes(), "{:?}", again.actions);
    session.apply(&again.hash).await.expect("nothing to do");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_autoscaled_workload_leaves_its_replicas_to_the_autoscaler() {
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let fx = Fixture::new();
    let session = Session::open(scaled::scaled_test::app(), &fx.options("a"))
        .await
        .expect("session");
    let first = session.plan(vec![], false).await.expect("plan");
    session
        .apply(&first.hash)
        .await
        .expect("create with the app's replicas");
    let deployments: kube::Api<Deployment> =
        kube::Api::namespaced(fx.sim.client().expect("client"), "scaled");
    let replicas = |d: Deployment| d.spec.and_then(|s| s.replicas);
    assert_eq!(
        replicas(deployments.get("web").await.expect("get")),
        Some(2)
    );

    // Not scaled yet: nothing to change.
    assert!(
        !session
            .plan(vec![], false)
            .await
            .expect("plan")
            .has_changes()
    );

    // The autoscaler scales up through the scale subresource, as the controller manager does.
    let scale = serde_json::json!({ "spec": { "replicas": 5 } });
    let params = kube::api::PatchParams {
        field_manager: Some("kube-controller-manager".into()),
        ..Default::default()
    };
    deployments
        .patch_scale("web", &params, &kube::api::Patch::Merge(&scale))
        .await
        .expect("scale");
    let plan = session.plan(vec![], false).await.expect("no conflict");
    let web = plan
        .actions
        .iter()
        .find(|a| a.object.kind == "Deployment")
        .expect("deployment");
    assert!(
        web.diff.iter().all(|c| !c.path.contains("replicas")),
        "{:?}",
        web.diff
    );
    let stored = plan
        .objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("object");
    assert!(
        stored["spec"].get("replicas").is_none(),
        "not sent: {stored}"
    );
    session.apply(&plan.hash).await.expect("apply");
    assert_eq!(
        replicas(deployments.get("web").await.expect("get")),
        Some(5)
    );
}

/// A write that races the apply between its precondition check and its own write: a status update (what
/// controllers do all the time) leaves the plan's precondition holding, so the optimistic write's 409 is
/// ridden out with the new resourceVersion; a change of the object itself in that window is refused,
/// naming it, and nothing of it is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_write_racing_the_apply_is_ridden_out_and_a_real_change_is_refused() {
    for (patch, subresource, applies) in [
        (
            r#"{"status":{"observedGeneration":41}}"#,
            Some("status"),
            true,
        ),
        (r#"{"metadata":{"labels":{"edited":"yes"}}}"#, None, false),
    ] {
        let fx = Fixture::new();
        let opts = fx.options("a");
        let session = fx.session(&opts).await;
        let first = session.plan(vec![], false).await.expect("plan");
        session.apply(&first.hash).await.expect("first apply");
        drop(session);

        let mut session = Session::open(app_with_image("1.28"), &opts)
            .await
            .expect("session");
        let plan = session.plan(vec![], false).await.expect("plan");
        let kubeconfig = fx.sim.kubeconfig_path().to_path_buf();
        let context = fx.sim.context().to_string();
        let cache = fx.dirs.path().join("kubectl-cache");
        let patched = Arc::new(AtomicBool::new(false));
        let p = patched.clone();
        // After every precondition was checked and before any write: someone else writes the Deployment.
        session.set_fault_hook(Some(Arc::new(move |at: &str| {
            if at == "preconditions checked" && !p.swap(true, Ordering::SeqCst) {
                let mut kubectl = std::process::Command::new("kubectl");
                kubectl
                    .arg("--kubeconfig")
                    .arg(&kubeconfig)
                    .args(["--context", &context, "-n", "g-one"])
                    .args(["patch", "deployment", "web", "--type=merge", "-p", patch])
                    .env("KUBECACHEDIR", &cache)
                    .env_remove("KUBECONFIG");
                if let Some(s) = subresource {
                    kubectl.arg(format!("--subresource={s}"));
                }
                let out = kubectl.output().expect("run kubectl");
                assert!(
                    out.status.success(),
                    "kubectl patch: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            true
        })));
        let result = session.apply(&plan.hash).await;
        assert!(patched.load(Ordering::SeqCst), "the racing write happened");
        if applies {
            result.expect("a status update does not stop the apply");
            assert_eq!(
                deployment_image(&fx.sim, "g-one").await,
                Some(image("1.28"))
            );
        } else {
            let err = result.expect_err("a changed object is refused");
            assert!(
                err.to_string().contains("was changed since the plan"),
                "{err}"
            );
            assert_eq!(
                deployment_image(&fx.sim, "g-one").await,
                Some(image("1.27")),
                "nothing of it was written"
            );
        }
    }
}
