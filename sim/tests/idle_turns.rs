//! An idle local cluster costs nothing between changes: once a rollout (through the real kubectl) has
//! settled, the controllers' periodic wake-ups find nothing changed and no timer due and skip their
//! turn, reading no list from the store; the next change is acted on as before.

mod common;

use std::time::Duration;

use common::{DEPLOYMENT, Kubectl, eventually};
use piceli_sim::{ControllerStats, Sim, SimConfig};

#[test]
fn an_idle_cluster_skips_its_controller_turns_and_reads_no_lists() {
    let mut config = SimConfig::default();
    // Wake-ups every 100 ms, so a second holds ten of them.
    config.controllers.resync = Duration::from_millis(100);
    let sim = Sim::start(config).expect("simulator starts");
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);

    // Timed follow-ups (the garbage collector's sweep of every kind) may still be due right after
    // the rollout: wait for a second in which every wake-up was skipped.
    let (before, after): (ControllerStats, ControllerStats) =
        eventually("a second of skipped turns", 30, || {
            let before = sim.controller_stats();
            std::thread::sleep(Duration::from_secs(1));
            let after = sim.controller_stats();
            (after.turns == before.turns && after.skipped >= before.skipped + 5)
                .then_some((before, after))
        });
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
    assert!(later.list_reads > after.list_reads, "{after:?} → {later:?}");
    sim.stop();
}
