//! An idle local cluster costs nothing between changes: once a rollout (through the real kubectl) has
//! settled, the controllers' periodic wake-ups find nothing changed and no timer due and skip their
//! turn, reading no list from the store; the next change is acted on as before, its objects taken
//! from the change events rather than read again. And a change runs only
//! the controllers that watch its kind: a ConfigMap write runs no workload controller.

use crate::common;

use std::time::Duration;

use common::{DEPLOYMENT, Kubectl, eventually};
use piceli_sim::{ControllerStats, RunningSim, Sim, SimConfig};

/// A simulator whose controllers wake up every 100 ms, so a second holds ten wake-ups.
fn sim_waking_often() -> RunningSim {
    let mut config = SimConfig::default();
    config.controllers.resync = Duration::from_millis(100);
    Sim::start(config).expect("simulator starts")
}

/// Timed follow-ups (the garbage collector's sweep of every kind) may still be due right after a
/// rollout: waits for a second in which every wake-up was skipped; the counters around it.
fn settled(sim: &RunningSim) -> (ControllerStats, ControllerStats) {
    eventually("a second of skipped turns", 30, || {
        let before = sim.controller_stats();
        std::thread::sleep(Duration::from_secs(1));
        let after = sim.controller_stats();
        (after.turns == before.turns && after.skipped >= before.skipped + 5)
            .then_some((before, after))
    })
}

#[test]
fn an_idle_cluster_skips_its_controller_turns_and_reads_no_lists() {
    let sim = sim_waking_often();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);

    let (before, after) = settled(&sim);
    assert_eq!(
        after.list_reads, before.list_reads,
        "skipped turns read no lists: {before:?} → {after:?}"
    );

    // A change after the idle spell is reconciled as before.
    k.ok(&["scale", "deploy/web", "--replicas=3"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let pods = k.ok(&["get", "pods", "-l", "app=web", "--no-headers"]);
    assert_eq!(pods.lines().count(), 3, "{pods}");
    let later = sim.controller_stats();
    assert!(later.turns > after.turns, "{after:?} → {later:?}");
    // The controllers' lists are kept current by the change events: the scale-up reads none of them
    // from the store again (one may be, when a change is published while it is listed).
    assert!(
        later.list_reads <= after.list_reads + 2,
        "{after:?} → {later:?}"
    );
    sim.stop();
}

#[test]
fn a_configmap_write_runs_no_workload_controller() {
    let sim = sim_waking_often();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    settled(&sim);
    let before = sim.controller_runs();

    k.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=level=debug",
    ]);
    k.ok(&["label", "configmap/settings", "tier=web"]);
    // The root CA publisher watches its own ConfigMap: deleting it calls for that controller, which
    // puts it back. Changes are taken in order, so once it is back the writes above were seen too.
    k.ok(&["delete", "configmap", "kube-root-ca.crt"]);
    eventually("kube-root-ca.crt published again", 30, || {
        let out = k.run(&["get", "configmap", "kube-root-ca.crt", "-o", "name"]);
        (out.code == 0).then_some(())
    });
    let after = sim.controller_runs();
    assert!(
        after["namespace-defaults"] > before["namespace-defaults"],
        "{before:?} → {after:?}"
    );
    for workload in [
        "deployment",
        "replicaset",
        "statefulset",
        "daemonset",
        "job",
        "cronjob",
        "kubelet",
        "endpoints",
    ] {
        assert_eq!(
            after[workload], before[workload],
            "{workload} ran for ConfigMap writes: {before:?} → {after:?}"
        );
    }

    // A change of a kind it watches runs it.
    k.ok(&["scale", "deploy/web", "--replicas=3"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let scaled = sim.controller_runs();
    assert!(
        scaled["deployment"] > after["deployment"],
        "{after:?} → {scaled:?}"
    );
    sim.stop();
}
