//! Controllers that must survive other processes and the API server: leader election on a Lease of the
//! local cluster (a standby takes over after the leader is killed; a released Lease is taken at once),
//! and a restart of the local cluster in the middle of a watch.

use crate::controller_support as support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use piceli_runtime::controller::{
    Action, Context, Controller, ControllerOptions, Controllers, LeaderElection, RunOptions,
};
use piceli_sim::{Sim, SimConfig};
use piceli_test_support::Cluster;
use serde_json::Value;
use support::{Log, Operator, health_server, http_get, kubectl, ok, wait_for};

const LEASE: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(200);

fn election() -> LeaderElection {
    LeaderElection {
        lease_name: "lamps-leader".into(),
        lease_duration: LEASE,
        renew_deadline: Duration::from_millis(1500),
        retry_period: RETRY,
    }
}

/// An operator process `identity` whose level controller logs `identity name` for each reconcile.
fn operator(sim: &Cluster, identity: &str, log: &Log) -> Operator {
    let log = log.clone();
    let who = identity.to_string();
    let controllers = Controllers::new("lamps").reconcile(
        "lamp",
        ControllerOptions::default(),
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let line = format!("{who} {}", cm.name_any());
            let log = log.clone();
            async move {
                log.push(line);
                Ok::<_, kube::Error>(Action::await_change())
            }
        },
    );
    let options = RunOptions {
        operator_namespace: "default".into(),
        identity: identity.into(),
        leader: Some(election()),
    };
    Operator::start(controllers, || sim.client().expect("client"), options)
}

fn holder(sim: &Cluster) -> Option<String> {
    let (code, out, _) = kubectl(
        sim.kubeconfig_path(),
        &["get", "lease", "lamps-leader", "-o", "json"],
    );
    if code != 0 {
        return None;
    }
    let lease: Value = serde_json::from_str(&out).expect("lease JSON");
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

#[test]
fn a_standby_takes_over_after_the_leader_is_killed_and_at_once_after_a_release() {
    let sim = Cluster::start();
    let kc = sim.kubeconfig_path().to_path_buf();
    let log = Log::default();
    let a = operator(&sim, "a", &log);
    wait_for("a to lead", Duration::from_secs(10), || {
        a.metrics.is_leader()
    });
    let b = operator(&sim, "b", &log);
    let (health_a, _a_http) = health_server(a.metrics.clone());
    let (health_b, _b_http) = health_server(b.metrics.clone());
    std::thread::sleep(LEASE);
    assert!(!b.metrics.is_leader(), "one leader at a time");
    assert_eq!(
        http_get(health_b, "/readyz").0,
        200,
        "a standby is ready (it serves, it does not reconcile)"
    );
    assert_eq!(http_get(health_b, "/healthz").0, 200);
    assert!(
        http_get(health_b, "/metrics")
            .1
            .contains("piceli_controller_leader 0")
    );
    wait_for(
        "the leader's caches to sync",
        Duration::from_secs(10),
        || http_get(health_a, "/readyz").0 == 200,
    );
    let metrics = http_get(health_a, "/metrics").1;
    assert!(metrics.contains("piceli_controller_leader 1"), "{metrics}");
    assert!(
        metrics.contains("piceli_controller_cache_synced{controller=\"lamp\"} 1"),
        "{metrics}"
    );
    assert_eq!(holder(&sim).as_deref(), Some("a"));

    ok(&kc, &["create", "configmap", "one"]);
    wait_for("the leader to reconcile", Duration::from_secs(10), || {
        log.has("a one")
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !log.has("b one"),
        "the standby does not reconcile: {:?}",
        log.lines()
    );

    let killed = Instant::now();
    a.kill();
    wait_for("b to take over", LEASE * 4, || b.metrics.is_leader());
    let takeover = killed.elapsed();
    eprintln!("takeover after kill: {takeover:?} (lease {LEASE:?}, retry {RETRY:?})");
    assert!(
        takeover >= LEASE - RETRY,
        "not before the Lease expired: {takeover:?}"
    );
    assert_eq!(holder(&sim).as_deref(), Some("b"));
    ok(&kc, &["create", "configmap", "two"]);
    wait_for(
        "the new leader to reconcile",
        Duration::from_secs(10),
        || log.has("b two") && log.has("b one"),
    );

    b.stop();
    assert_eq!(holder(&sim), None, "a graceful stop releases the Lease");
    let started = Instant::now();
    let c = operator(&sim, "c", &log);
    wait_for("c to lead", Duration::from_secs(10), || {
        c.metrics.is_leader()
    });
    let released = started.elapsed();
    eprintln!("leader after a release: {released:?}");
    assert!(
        released < LEASE,
        "a released Lease is taken without waiting for it to expire: {released:?}"
    );
    let transitions = {
        let out = ok(&kc, &["get", "lease", "lamps-leader", "-o", "json"]);
        let lease: Value = serde_json::from_str(&out).expect("lease JSON");
        lease["spec"]["leaseTransitions"].as_i64()
    };
    assert_eq!(transitions, Some(2), "a → b → c");
    c.stop();
}

struct Audit(Log);

impl Controller<ConfigMap> for Audit {
    type Error = kube::Error;

    async fn on_create(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), kube::Error> {
        self.0.push(format!("create {}", cm.name_any()));
        Ok(())
    }

    async fn on_delete(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), kube::Error> {
        self.0.push(format!("delete {}", cm.name_any()));
        Ok(())
    }
}

/// On the local cluster only: it restarts the cluster on its directory.
#[test]
fn controllers_keep_working_across_a_restart_of_the_local_cluster_sim_only() {
    let dir = tempfile::tempdir().expect("cluster dir");
    let config = || SimConfig {
        dir: Some(dir.path().to_path_buf()),
        ..SimConfig::default()
    };
    let sim = Sim::start(config()).expect("the local cluster starts");
    let kc = sim.kubeconfig_path().to_path_buf();
    let log = Log::default();
    let controllers =
        Controllers::new("audit").edge("audit", ControllerOptions::default(), Audit(log.clone()));
    let options = RunOptions {
        operator_namespace: "default".into(),
        identity: "audit".into(),
        leader: None,
    };
    let operator = Operator::start(controllers, || sim.client().expect("client"), options);
    ok(&kc, &["create", "configmap", "one"]);
    ok(&kc, &["create", "configmap", "two"]);
    wait_for(
        "on_create before the restart",
        Duration::from_secs(10),
        || log.has("create one") && log.has("create two"),
    );

    sim.stop();
    std::thread::sleep(Duration::from_millis(500));
    let sim = Sim::start(config()).expect("the local cluster starts again on its directory");
    ok(&kc, &["create", "configmap", "three"]);
    ok(&kc, &["delete", "configmap", "one"]);
    wait_for(
        "on_create and on_delete after the restart",
        Duration::from_secs(30),
        || log.has("create three") && log.has("delete one"),
    );
    let lines = log.lines();
    assert_eq!(
        lines.iter().filter(|l| *l == "create two").count(),
        1,
        "nothing handled twice: {lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| *l == "create one").count(),
        1,
        "nothing handled twice: {lines:?}"
    );
    operator.stop();
    drop(sim);
}
