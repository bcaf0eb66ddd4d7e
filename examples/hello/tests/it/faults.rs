//! Commit-exact fault injection for hello: `apply --approve H` and `deploy --approve H` aborted right after
//! each of their journal commits in turn, recovered, and proven converged (see `support/fault_trials.rs`).
//! Needs the `fault-injection` feature, which this crate's dev-dependency on `piceli` turns on.

#[path = "../support/mod.rs"]
mod support;

use piceli_sim::{Sim, SimConfig};
use support::fault_trials::{Mode, Trials};

fn trials(mode: Mode, prefix: &str, what: &str) {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let summary = Trials {
        bin: std::path::Path::new(env!("CARGO_BIN_EXE_hello")),
        app: "hello",
        sim: &sim,
        mode,
        prefix,
        timeout_secs: 60,
        parallel: 2,
    }
    .run(what);
    assert!(
        summary.trials.len() > 1,
        "the first run was not killed: is the fault-injection feature on? {}",
        summary.report()
    );
    summary.assert_all_converged();
}

#[test]
fn every_commit_of_a_hello_apply_is_a_kill_point_that_converges() {
    trials(Mode::Apply, "fault-apply", "hello apply");
}

#[test]
fn every_commit_of_a_hello_deploy_is_a_kill_point_that_converges() {
    trials(Mode::Deploy, "fault-deploy", "hello deploy");
}
