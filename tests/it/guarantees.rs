//! The engine keeps its promises against tampering, concurrency and unlucky kills (in process, against the
//! local API server): a stored plan edited after approval is refused at every use, a plan runs only for
//! its target and namespace, one apply per target across state directories (the cluster Lease), a kill
//! before the release is journaled or before the cluster's record is written recovers, a lost
//! connection leaves the release resumable, and a stale `stop` never halts the next apply (`resume --abandon`: tests/it/abandon.rs).

use crate::engine_fixture;

use engine_fixture::*;
use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use piceli::runtime::engine::lock::lease_name;
use piceli::runtime::engine::session::Session;
use piceli_test_support::Cluster;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_a_plan_edited_after_approval() {
    for rehash in [false, true] {
        let fx = Fixture::new();
        let opts = fx.options("a");
        let mut session = fx.session(&opts).await;
        let plan = session.plan(vec![], false).await.expect("plan");
        session.fault_hook = Some(kill_at("step 1 started"));
        let err = session.apply(&plan.hash).await.expect_err("killed");
        assert!(matches!(err, EngineError::Killed(_)), "{err}");
        drop(session);

        tamper(&fx.state("a"), &plan.hash, &image("evil"), rehash);
        let session = fx.session(&opts).await;
        let err = session.resume().await.expect_err("tampered plan refused");
        assert!(
            matches!(err, EngineError::PlanTampered { .. }),
            "rehash {rehash}: {err}"
        );
        assert_eq!(err.code().as_str(), "PCL0140");
        assert!(
            err.exit_class() == piceli::runtime::ExitClass::Rejected,
            "exit 2"
        );
        assert!(
            session
                .state
                .journal
                .unfinished()
                .expect("journal")
                .is_some(),
            "nothing was recorded as done"
        );
        assert_ne!(
            deployment_image(&fx.sim, "g-one").await,
            Some(image("evil")),
            "rehash {rehash}: the edited image was never written"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_refuses_an_edited_plan_and_a_rehashed_one_is_unknown() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    drop(session);
    tamper(&fx.state("a"), &plan.hash, &image("evil"), false);
    let session = fx.session(&opts).await;
    let err = session.apply(&plan.hash).await.expect_err("edited");
    assert!(matches!(err, EngineError::PlanTampered { .. }), "{err}");
    assert_eq!(deployment_image(&fx.sim, "g-one").await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_runs_only_for_its_target_and_namespace() {
    let fx = Fixture::new();
    let mut opts = fx.options("a");
    opts.namespace = Some("g-two".into());
    let planned = fx
        .session(&opts)
        .await
        .plan(vec![], false)
        .await
        .expect("plan");

    // Another namespace, same state directory.
    opts.namespace = Some("g-three".into());
    let err = fx
        .session(&opts)
        .await
        .apply(&planned.hash)
        .await
        .expect_err("other namespace");
    assert!(matches!(err, EngineError::WrongTarget { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("g-two") && text.contains("g-three"), "{text}");
    assert!(err.exit_class() == piceli::runtime::ExitClass::Rejected);

    // Another target, same state directory.
    opts.namespace = None;
    opts.target = Some("staging".into());
    let staged = fx
        .session(&opts)
        .await
        .plan(vec![], false)
        .await
        .expect("plan");
    opts.target = Some("local".into());
    let err = fx
        .session(&opts)
        .await
        .apply(&staged.hash)
        .await
        .expect_err("other target");
    let text = err.to_string();
    assert!(
        text.contains("`staging`") && text.contains("`local`"),
        "{text}"
    );
    for ns in ["g-one", "g-two", "g-three", "g-stage"] {
        assert_eq!(
            deployment_image(&fx.sim, ns).await,
            None,
            "{ns}: nothing written"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_apply_per_target_across_state_directories() {
    let fx = Fixture::new();
    let (opts_a, opts_b) = (fx.options("a"), fx.options("b"));
    let a = Session::open(app_with_image("1.27"), &opts_a)
        .await
        .expect("a");
    let b = Session::open(app_with_image("1.28"), &opts_b)
        .await
        .expect("b");
    let plan_a = a.plan(vec![], false).await.expect("plan a");
    let plan_b = b.plan(vec![], false).await.expect("plan b");
    assert_ne!(plan_a.hash, plan_b.hash);

    // A holds the lock (the namespace exists after its first level) and pauses before its next write.
    let paused = Arc::new(AtomicBool::new(false));
    let go_on = Arc::new(AtomicBool::new(false));
    let mut a = a;
    let (p, g) = (paused.clone(), go_on.clone());
    a.fault_hook = Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.store(true, Ordering::SeqCst);
            let until = std::time::Instant::now() + Duration::from_secs(20);
            while !g.load(Ordering::SeqCst) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        true
    }));
    let hash_a = plan_a.hash.clone();
    // On a thread of its own: its fault hook blocks the thread it runs on.
    let running_a = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move { a.apply(&hash_a).await.map(|applied| applied.release) })
    });
    while !paused.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let err = b.apply(&plan_b.hash).await.expect_err("B refused");
    assert!(matches!(err, EngineError::ClusterLocked { .. }), "{err}");
    assert!(err.exit_class() == piceli::runtime::ExitClass::Rejected);
    assert!(err.to_string().contains(&lease_name("guard-test")), "{err}");
    assert!(
        b.state.journal.releases().expect("journal").is_empty(),
        "B began nothing"
    );

    go_on.store(true, Ordering::SeqCst);
    let released = running_a.join().expect("join").expect("A applied");
    assert_eq!(released, Some(1));
    assert_eq!(
        deployment_image(&fx.sim, "g-one").await,
        Some(image("1.27"))
    );

    // With --wait-lock B waits for A's lock, then finds its plan stale: nothing of B is mixed in.
    let mut opts_b = opts_b;
    opts_b.wait_lock = Some(Duration::from_secs(20));
    let b = Session::open(app_with_image("1.28"), &opts_b)
        .await
        .expect("b");
    let err = b.apply(&plan_b.hash).await.expect_err("B's plan is stale");
    assert!(matches!(err, EngineError::Precondition(_)), "{err}");
    assert_eq!(
        deployment_image(&fx.sim, "g-one").await,
        Some(image("1.27"))
    );

    // The Lease is released: held by nobody, and records no running release.
    use piceli::k8s_openapi::api::coordination::v1::Lease;
    let leases: kube::Api<Lease> = kube::Api::namespaced(fx.sim.client().expect("client"), "g-one");
    let lease = leases.get(&lease_name("guard-test")).await.expect("lease");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity, None);
    assert!(
        !lease
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key("piceli.dev/plan")
    );
}

/// Two state directories apply two versions of the app, planned before its namespace existed, at the same
/// moment: never both succeed (the namespace's create is the lock's first step), and the Deployment is
/// written once. 20 rounds, each in a namespace of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_first_applies_to_a_new_namespace_never_both_succeed() {
    const ROUNDS: usize = 20;
    let fx = Fixture::new();
    let mut successes = Vec::new();
    for round in 0..ROUNDS {
        let namespace = format!("race-{round}");
        let (mut opts_a, mut opts_b) = (
            fx.options(&format!("a{round}")),
            fx.options(&format!("b{round}")),
        );
        opts_a.namespace = Some(namespace.clone());
        opts_b.namespace = Some(namespace.clone());
        let a = Session::open(app_with_image("1.27"), &opts_a)
            .await
            .expect("a");
        let b = Session::open(app_with_image("1.28"), &opts_b)
            .await
            .expect("b");
        let plan_a = a.plan(vec![], false).await.expect("plan a");
        let plan_b = b.plan(vec![], false).await.expect("plan b");
        let (ra, rb) = tokio::join!(a.apply(&plan_a.hash), b.apply(&plan_b.hash));
        let won: Vec<&str> = [("a", &ra), ("b", &rb)]
            .into_iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(who, _)| who)
            .collect();
        assert!(
            won.len() <= 1,
            "round {round}: both applies reported success ({ra:?}, {rb:?})"
        );
        for (who, r) in [("a", &ra), ("b", &rb)] {
            if let Err(e) = r {
                assert!(
                    matches!(
                        e,
                        EngineError::Precondition(_) | EngineError::ClusterLocked { .. }
                    ),
                    "round {round}: {who} failed for another reason: {e}"
                );
            }
        }
        use piceli::k8s_openapi::api::apps::v1::Deployment;
        let deployments: kube::Api<Deployment> =
            kube::Api::namespaced(fx.sim.client().expect("client"), &namespace);
        if let Some(d) = deployments.get_opt("web").await.expect("get") {
            assert_eq!(
                d.metadata.generation,
                Some(1),
                "round {round}: the Deployment was written once"
            );
            let live = deployment_image(&fx.sim, &namespace).await;
            let expected = match won.as_slice() {
                ["a"] => Some(image("1.27")),
                ["b"] => Some(image("1.28")),
                _ => None,
            };
            assert_eq!(live, expected, "round {round}: the winner's image is live");
        }
        successes.push(won.len());
    }
    assert!(
        successes.iter().filter(|&&n| n == 1).count() >= ROUNDS / 2,
        "most rounds have a winner: {successes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_before_the_release_is_journaled_leaves_nothing_to_resume() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.fault_hook = Some(kill_at("preconditions checked"));
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
    assert!(matches!(err, EngineError::Precondition(_)), "{err}");
    assert!(err.to_string().contains("an apply of this app"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_resume_after_a_kill_before_the_release_finishes_the_run() {
    let fx = Fixture::new();
    let opts = fx.options("a");
    let mut session = fx.session(&opts).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.fault_hook = Some(kill_at("preconditions checked"));
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
    session.fault_hook = Some(kill_at("release finished"));
    assert!(matches!(
        session.apply(&plan.hash).await,
        Err(EngineError::Killed(_))
    ));
    drop(session);
    let session = fx.session(&opts).await;
    let read = || piceli::runtime::engine::record::read(&session.conn, "guard-test", "g-one");
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
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(session.conn.client.clone(), "g-one");
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
    session.state.journal.request_stop().expect("stop");
    let plan = session.plan(vec![], false).await.expect("plan");
    let applied = session.apply(&plan.hash).await.expect("not halted");
    assert_eq!(applied.release, Some(1));
    assert!(!session.state.journal.stop_requested().expect("journal"));
}

/// A loopback TCP proxy in front of the local cluster whose connections can be cut, as a network would.
struct Proxy {
    addr: std::net::SocketAddr,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (cut, watch) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut cut = watch.clone();
                tokio::spawn(async move {
                    if *cut.borrow() {
                        return;
                    }
                    let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.wait_for(|c| *c) => {}
                    }
                });
            }
        });
        Proxy { addr, cut }
    }

    fn set_cut(&self, cut: bool) {
        let _ = self.cut.send(cut);
    }

    /// A kubeconfig for the cluster behind the proxy (its certificate names 127.0.0.1, any port).
    fn kubeconfig(&self, sim: &Cluster, dir: &Path) -> PathBuf {
        let text = std::fs::read_to_string(sim.kubeconfig_path()).expect("kubeconfig");
        let text = text.replace(&sim.url(), &format!("https://{}", self.addr));
        let path = dir.join("proxied.kubeconfig");
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }
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
    session.fault_hook = Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.set_cut(true);
        }
        true
    }));
    let err = session.apply(&plan.hash).await.expect_err("interrupted");
    assert!(matches!(err, EngineError::Interrupted(_)), "{err}");
    assert_eq!(err.code().as_str(), "PCL0143");
    let running = session.state.journal.unfinished().expect("journal");
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
    session.fault_hook = Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.set_cut(true);
            let back = p.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(700));
                back.set_cut(false);
            });
        }
        true
    }));
    let applied = session
        .apply(&plan.hash)
        .await
        .expect("applied despite the outage");
    assert_eq!(applied.release, Some(1));
    assert!(
        session
            .state
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
        .find(|a| a.kind == "Namespace")
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

mod scaled {
    piceli::app! {
        app scaled-test;
        target local = local(namespace: "scaled");
        deployment web {
            image: "docker.io/library/nginx:1.27@sha256:abababababababababababababababababababababababababababababababab",
            replicas: 2,
            ports: { http: 80 },
        }
        autoscaler web -> web { min: 2, max: 6, cpu: 70 }
    }
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
        .find(|a| a.kind == "Deployment")
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
        session.fault_hook = Some(Arc::new(move |at: &str| {
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
        }));
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
