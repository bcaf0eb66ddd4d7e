//! The rules that turn what `status` read into one state for the app: `unknown`, `down`, `degraded` or
//! `up` (documented in docs/commands.md; the tests below pin each rule).

use super::health::{Health, WorkloadHealth};
use crate::journal::CheckResult;
use serde::Serialize;

/// The app's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Every workload ready and the last checks passed.
    Up,
    /// Serving, but some workload is not fully ready, or the last checks failed.
    Degraded,
    /// A workload is missing or has no ready pod.
    Down,
    /// The cluster cannot be reached, or nothing was ever deployed.
    Unknown,
}

impl State {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Up => "up",
            State::Degraded => "degraded",
            State::Down => "down",
            State::Unknown => "unknown",
        }
    }
}

/// What the state is decided from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// Why the cluster could not be read (`None`: it answered).
    pub unreachable: Option<&'a str>,
    /// Whether a release was ever made live (the journal's or the cluster's record).
    pub deployed: bool,
    /// Each declared workload's health.
    pub workloads: &'a [WorkloadHealth],
    /// The last check results.
    pub checks: &'a [CheckResult],
}

/// The state and the reasons behind it (empty when up).
pub fn decide(inputs: &Inputs<'_>) -> (State, Vec<String>) {
    if let Some(why) = inputs.unreachable {
        return (
            State::Unknown,
            vec![format!("the cluster cannot be reached: {why}")],
        );
    }
    if !inputs.deployed {
        return (
            State::Unknown,
            vec!["nothing was ever deployed to this target (no release in the journal or the cluster)".into()],
        );
    }
    let describe = |w: &WorkloadHealth| {
        let mut s = format!(
            "{} {}: {} ({}/{} ready)",
            w.kind,
            w.name,
            w.health.as_str(),
            w.ready,
            w.desired
        );
        if let Some(r) = &w.reason {
            s.push_str(&format!(": {r}"));
        }
        s
    };
    let down: Vec<String> = inputs
        .workloads
        .iter()
        .filter(|w| matches!(w.health, Health::Missing | Health::Unavailable))
        .map(describe)
        .collect();
    if !down.is_empty() {
        return (State::Down, down);
    }
    let mut degraded: Vec<String> = inputs
        .workloads
        .iter()
        .filter(|w| w.health == Health::Progressing)
        .map(describe)
        .collect();
    degraded.extend(
        inputs
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("check {} ({}) failed: {}", c.name, c.kind, c.message)),
    );
    if !degraded.is_empty() {
        return (State::Degraded, degraded);
    }
    (State::Up, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(health: Health, ready: i64, desired: i64) -> WorkloadHealth {
        WorkloadHealth {
            kind: "Deployment".into(),
            name: "web".into(),
            health,
            ready,
            desired,
            reason: None,
        }
    }

    fn check(passed: bool) -> CheckResult {
        CheckResult {
            name: "http-web".into(),
            kind: "http".into(),
            passed,
            attempts: 3,
            message: "got 503, want 200".into(),
            release: Some(1),
            finished_at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    fn state(
        unreachable: Option<&str>,
        deployed: bool,
        ws: &[WorkloadHealth],
        cs: &[CheckResult],
    ) -> State {
        decide(&Inputs {
            unreachable,
            deployed,
            workloads: ws,
            checks: cs,
        })
        .0
    }

    #[test]
    fn unknown_when_unreachable_or_never_deployed() {
        let ready = [w(Health::Ready, 2, 2)];
        assert_eq!(state(Some("refused"), true, &ready, &[]), State::Unknown);
        assert_eq!(state(None, false, &ready, &[]), State::Unknown);
        let (_, why) = decide(&Inputs {
            unreachable: Some("connection refused"),
            deployed: true,
            workloads: &[],
            checks: &[],
        });
        assert!(why[0].contains("connection refused"), "{why:?}");
    }

    #[test]
    fn down_when_a_workload_is_missing_or_has_nothing_ready() {
        assert_eq!(
            state(
                None,
                true,
                &[w(Health::Ready, 2, 2), w(Health::Missing, 0, 2)],
                &[]
            ),
            State::Down
        );
        let mut stuck = w(Health::Unavailable, 0, 2);
        stuck.reason = Some("pod web-1: CrashLoopBackOff".into());
        let (s, why) = decide(&Inputs {
            unreachable: None,
            deployed: true,
            workloads: &[stuck],
            checks: &[check(true)],
        });
        assert_eq!(s, State::Down);
        assert_eq!(
            why,
            ["Deployment web: unavailable (0/2 ready): pod web-1: CrashLoopBackOff"]
        );
    }

    #[test]
    fn degraded_when_progressing_or_checks_failed() {
        assert_eq!(
            state(None, true, &[w(Health::Progressing, 1, 2)], &[]),
            State::Degraded
        );
        let (s, why) = decide(&Inputs {
            unreachable: None,
            deployed: true,
            workloads: &[w(Health::Ready, 2, 2)],
            checks: &[check(true), check(false)],
        });
        assert_eq!(s, State::Degraded);
        assert!(why[0].contains("got 503"), "{why:?}");
    }

    #[test]
    fn up_when_all_ready_and_checks_pass() {
        assert_eq!(
            state(None, true, &[w(Health::Ready, 2, 2)], &[check(true)]),
            State::Up
        );
        assert_eq!(state(None, true, &[], &[]), State::Up);
    }
}
