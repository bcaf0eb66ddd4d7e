//! Commit-exact fault injection for a 100-object apply: `apply --approve H` of the fleet app aborted right
//! after each of its journal commits in turn, recovered with `resume`, and proven converged (the driver is
//! hello's `tests/support/`, shared by path).

#[path = "../../hello/tests/support/mod.rs"]
mod support;

use piceli_sim::{Sim, SimConfig};
use support::fault_trials::{Mode, Trials};

#[test]
fn every_commit_of_a_100_object_apply_is_a_kill_point_that_converges() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let summary = Trials {
        bin: std::path::Path::new(env!("CARGO_BIN_EXE_fleet")),
        app: "fleet",
        sim: &sim,
        mode: Mode::Apply,
        prefix: "fault-fleet",
        timeout_secs: 0,
        parallel: 3,
    }
    .run("fleet apply (100 objects)");
    assert!(
        summary.trials.len() > 200,
        "a 100-object apply makes over 200 journal commits: {}",
        summary.report()
    );
    summary.assert_all_converged();
}
