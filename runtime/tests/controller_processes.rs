//! Leader election between two operator processes on the local cluster: the standby takes over after
//! the leader gets `kill -9`, and a SIGTERM releases the Lease. The operator process is this test binary
//! run again with the ignored fixture `operator_process` (it needs the environment the test gives it).

#[path = "controller/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use piceli_runtime::controller::{
    Action, Context, ControllerOptions, Controllers, LeaderElection, RunOptions,
};
use piceli_sim::{RunningSim, Sim, SimConfig};
use serde_json::Value;
use support::{kubectl, ok, wait_for};

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
        let _ = rustls::crypto::ring::default_provider().install_default();
        let kc = kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig");
        let options = kube::config::KubeConfigOptions {
            context: Some(piceli_sim::kubeconfig::CONTEXT.to_string()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kc, &options)
            .await
            .expect("config");
        let client = kube::Client::try_from(config).expect("client");
        let who = identity.clone();
        let controllers = Controllers::new("procs").reconcile(
            "lamp",
            ControllerOptions::default(),
            move |cm: Arc<ConfigMap>, _cx: Context| {
                let line = format!("{who} {}\n", cm.name_any());
                let log = log.clone();
                async move {
                    use std::io::Write;
                    let mut file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&log)?;
                    file.write_all(line.as_bytes())?;
                    Ok::<_, std::io::Error>(Action::await_change())
                }
            },
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

fn spawn(sim: &RunningSim, identity: &str, log: &Path) -> Child {
    Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "operator_process",
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

fn holder(sim: &RunningSim) -> Option<String> {
    let (code, out, _) = kubectl(
        sim.kubeconfig_path(),
        &["get", "lease", "procs-leader", "-o", "json"],
    );
    if code != 0 {
        return None;
    }
    let lease: Value = serde_json::from_str(&out).expect("lease JSON");
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

fn logged(log: &Path, line: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l == line))
}

#[test]
fn two_operator_processes_hand_over_the_lease_after_kill_9_and_release_it_on_sigterm() {
    let sim = Sim::start(SimConfig::default()).expect("the local cluster starts");
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
