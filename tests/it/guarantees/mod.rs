//! The engine keeps its promises against tampering, concurrency and unlucky kills (in process, against the
//! local API server): a stored plan edited after approval is refused at every use, a plan runs only for
//! its target and namespace, one apply per target across state directories (the cluster Lease), a kill
//! before the release is journaled or before the cluster's record is written recovers, a lost
//! connection leaves the release resumable, and a stale `stop` never halts the next apply (`resume --abandon`: tests/it/abandon.rs).

mod recovery;

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
        session.set_fault_hook(Some(kill_at("step 1 started")));
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
                .state()
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
    a.set_fault_hook(Some(Arc::new(move |at: &str| {
        if at == "step 1 started" {
            p.store(true, Ordering::SeqCst);
            let until = std::time::Instant::now() + Duration::from_secs(20);
            while !g.load(Ordering::SeqCst) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        true
    })));
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
        b.state().journal.releases().expect("journal").is_empty(),
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
    assert!(matches!(err, EngineError::Precondition { .. }), "{err}");
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
                        EngineError::Precondition { .. } | EngineError::ClusterLocked { .. }
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
