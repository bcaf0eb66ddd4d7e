//! Leader election between two operator processes on the local cluster: the standby takes over after
//! the leader gets `kill -9`, and a SIGTERM releases the Lease. The operator process is this test binary
//! run again with the ignored fixture `operator_process` (it needs the environment the test gives it).

use crate::controller_support as support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use piceli_runtime::controller::{ControllerOptions, Controllers, LeaderElection, RunOptions};
use piceli_test_support::Cluster;
use support::{logged, ok, wait_for};

const LEASE: Duration = Duration::from_secs(2);

fn election() -> LeaderElection {
    LeaderElection {
        lease_name: "procs-leader".into(),
        lease_duration: LEASE,
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(200),
    }
}

#[test]
#[ignore = "fixture: the operator process `two_operator_processes_hand_over_the_lease` starts"]
fn operator_process() {
    let kubeconfig = std::env::var("PICELI_TEST_OPERATOR_KUBECONFIG")
        .expect("run by two_operator_processes_hand_over_the_lease, which sets the environment");
    let identity = std::env::var("PICELI_TEST_OPERATOR_IDENTITY").expect("identity");
    let log = PathBuf::from(std::env::var("PICELI_TEST_OPERATOR_LOG").expect("log file"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let client = support::cluster_client(&kubeconfig).await;
        let controllers = Controllers::new("procs").reconcile(
            "lamp",
            ControllerOptions::default(),
            support::logging_reconciler(identity.clone(), log),
        );
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        let shutdown = async move {
            term.recv().await;
        };
        let options = RunOptions {
            operator_namespace: "default".into(),
            identity,
            leader: Some(election()),
        };
        controllers
            .run(client, options, shutdown)
            .await
            .expect("controllers run");
    });
}

fn spawn(sim: &Cluster, identity: &str, log: &Path) -> Child {
    Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "controller_processes::operator_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PICELI_TEST_OPERATOR_KUBECONFIG", sim.kubeconfig_path())
        .env("PICELI_TEST_OPERATOR_IDENTITY", identity)
        .env("PICELI_TEST_OPERATOR_LOG", log)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the operator process starts")
}

fn holder(sim: &Cluster) -> Option<String> {
    support::lease_holder(sim.kubeconfig_path(), "procs-leader")
}

#[test]
fn two_operator_processes_hand_over_the_lease_after_kill_9_and_release_it_on_sigterm() {
    let sim = Cluster::start();
    let kc = sim.kubeconfig_path().to_path_buf();
    let work = tempfile::tempdir().expect("work dir");
    let log = work.path().join("reconciles.log");
    let mut a = spawn(&sim, "a", &log);
    wait_for("a to hold the Lease", Duration::from_secs(30), || {
        holder(&sim).as_deref() == Some("a")
    });
    let mut b = spawn(&sim, "b", &log);
    std::thread::sleep(LEASE + Duration::from_secs(1));
    assert_eq!(holder(&sim).as_deref(), Some("a"), "the standby waits");
    ok(&kc, &["create", "configmap", "one"]);
    wait_for("the leader to reconcile", Duration::from_secs(10), || {
        logged(&log, "a one")
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!logged(&log, "b one"), "the standby does not reconcile");

    let killed = Instant::now();
    a.kill().expect("kill -9 the leader");
    let _ = a.wait();
    wait_for("b to take the Lease", LEASE * 5, || {
        holder(&sim).as_deref() == Some("b")
    });
    eprintln!(
        "takeover after kill -9: {:?} (lease {LEASE:?})",
        killed.elapsed()
    );
    ok(&kc, &["create", "configmap", "two"]);
    wait_for(
        "the new leader to reconcile",
        Duration::from_secs(10),
        || logged(&log, "b two") && logged(&log, "b one"),
    );

    let term = std::process::Command::new("kill")
        .args(["-TERM", &b.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success(), "kill -TERM {}", b.id());
    let began = Instant::now();
    let status = loop {
        if let Some(status) = b.try_wait().expect("wait") {
            break status;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "SIGTERM stops the operator"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "a graceful stop: {status}");
    assert_eq!(holder(&sim), None, "SIGTERM released the Lease");
}
