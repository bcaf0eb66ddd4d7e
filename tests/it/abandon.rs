//! `resume --abandon`: a release interrupted and then followed by a changed secret source can no longer
//! be finished as approved (PCL0114) and blocks new applies (PCL0144); abandoning it (journaled as
//! `superseded`) lets a new plan replace it. The secret's source is an `--env-file` the test rewrites.

use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli::runtime::journal::{ReleaseId, ReleaseState};
use piceli_test_support::Cluster;
use std::sync::Arc;

piceli::app! {
    app abandon-test;
    target local = local(namespace: "abandon");
    secret api { key: from_env("ABANDON_TEST_API_KEY") }
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:abababababababababababababababababababababababababababababababab",
        ports: { http: 80 },
        env: { KEY: secret(api.key) },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_cannot_be_finished_is_abandoned_then_replaced() {
    let sim = Cluster::start();
    let state = tempfile::tempdir().expect("temp dir");
    let env_file = state.path().join("test.env");
    std::fs::write(&env_file, "ABANDON_TEST_API_KEY=first\n").expect("env file");
    let opts = SessionOptions {
        target: None,
        namespace: None,
        connect: ConnectOptions {
            kubeconfig: Some(sim.kubeconfig_path().to_path_buf()),
            context: Some(sim.context().into()),
        },
        state_dir: Some(state.path().to_path_buf()),
        wait: None,
        wait_lock: None,
        env_files: vec![env_file.clone()],
    };
    let mut session = Session::open(abandon_test::app(), &opts)
        .await
        .expect("session");
    let plan = session.plan(vec![], false).await.expect("plan");
    // Killed after the first object was written.
    session.set_fault_hook(Some(Arc::new(|at: &str| at != "step 1 started")));
    assert!(matches!(
        session.apply(&plan.hash).await,
        Err(EngineError::Killed(_))
    ));
    drop(session);

    // The secret's source changed: resume cannot finish the release as approved…
    std::fs::write(&env_file, "ABANDON_TEST_API_KEY=second\n").expect("env file");
    let session = Session::open(abandon_test::app(), &opts)
        .await
        .expect("session");
    let err = session.resume().await.expect_err("stale");
    assert!(matches!(err, EngineError::Stale { .. }), "{err}");
    assert_eq!(err.code().as_str(), "PCL0114");
    assert!(err.help().contains("resume --abandon"), "{}", err.help());
    // …and a new plan cannot be applied while it runs.
    let next = session.plan(vec![], false).await.expect("plan 2");
    let blocked = session.apply(&next.hash).await.expect_err("blocked");
    assert!(
        matches!(blocked, EngineError::ReleaseRunning(1)),
        "{blocked}"
    );
    assert_eq!(blocked.code().as_str(), "PCL0144");
    assert!(
        blocked.help().contains("resume --abandon"),
        "{}",
        blocked.help()
    );

    // The way out: abandon it (journaled), then the new plan applies.
    assert_eq!(session.abandon().await.expect("abandon"), Some(1));
    assert_eq!(
        session.abandon().await.expect("again"),
        None,
        "nothing left"
    );
    let ended = session
        .state()
        .journal
        .release(ReleaseId(1))
        .expect("journal")
        .expect("release 1");
    assert_eq!(ended.state, ReleaseState::Superseded);
    assert_eq!(session.resume().await.expect("resume").release, None);
    let applied = session.apply(&next.hash).await.expect("apply the new plan");
    assert_eq!(applied.release, Some(2));
    assert!(
        !session
            .plan(vec![], false)
            .await
            .expect("plan 3")
            .has_changes()
    );
}
