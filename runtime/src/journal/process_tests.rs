//! Tests across handles and processes: the apply lock, `stop` from another handle, and a writer killed at
//! varied instants (a child process running this test binary).

use super::tests::{dir, ok, planned};
use super::*;

#[test]
fn journal_lock_refuses_second_holder() {
    let d = dir();
    let state = d.path().join("state");
    let lock = Journal::lock(&state).unwrap();
    assert_eq!(lock.path(), state.join(LOCK_FILE));
    let err = Journal::lock(&state).unwrap_err();
    match &err {
        JournalError::Locked { pid, .. } => assert_eq!(*pid, Some(std::process::id())),
        other => panic!("expected Locked, got {other}"),
    }
    assert!(
        err.to_string()
            .contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    // The journal itself stays readable while locked (`history`, `stop`).
    Journal::open(&state).unwrap().request_stop().unwrap();
    drop(lock);
    let again = Journal::lock(&state).unwrap();
    drop(again);
}

#[test]
fn journal_stop_request_round_trip() {
    let d = dir();
    let runner = Journal::open(d.path()).unwrap();
    let other = Journal::open(d.path()).unwrap(); // as `stop` in another process would
    assert!(!runner.stop_requested().unwrap());
    other.request_stop().unwrap();
    other.request_stop().unwrap(); // twice is fine
    assert!(runner.stop_requested().unwrap());
    runner.clear_stop().unwrap();
    assert!(!other.stop_requested().unwrap());
    runner.clear_stop().unwrap(); // clearing nothing is fine
}

/// Set in the child process of [`journal_survives_kill_at_any_instant`] to the state directory it writes.
const CRASH_CHILD_DIR: &str = "PICELI_JOURNAL_CRASH_CHILD_DIR";

/// The child of [`journal_survives_kill_at_any_instant`]: holds the lock and applies releases (resuming
/// any unfinished one first) until it is killed. Without the variable it does nothing.
#[test]
fn journal_crash_child_helper() {
    let Some(state) = std::env::var_os(CRASH_CHILD_DIR) else {
        return;
    };
    let state = PathBuf::from(state);
    let _lock = Journal::lock(&state).unwrap();
    let j = Journal::open(&state).unwrap();
    // On its own line: the harness has printed `test … ... ` with no newline.
    println!("\nlocked");
    // Killed within a second by the parent; the deadline only ends an orphan if the parent itself died.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    for round in 0u64.. {
        if std::time::Instant::now() > deadline {
            return;
        }
        let id = match j.unfinished().unwrap() {
            Some(release) => release.id,
            None => {
                let hash = format!("h{}-{round}", std::process::id());
                j.save_plan(&hash, "dev", "{}").unwrap();
                let steps: Vec<PlannedStep> =
                    (0..5).map(|i| planned(&format!("s{i}"), i)).collect();
                j.begin_release(&hash, ReleaseKind::Apply, &steps).unwrap()
            }
        };
        for step in j.steps(id).unwrap() {
            if step.state != StepState::Done {
                j.step_started(id, step.index).unwrap();
                j.step_finished(id, step.index, &ok(&format!("u-{}", step.index)))
                    .unwrap();
            }
        }
        j.finish_release(id, ReleaseState::Succeeded).unwrap();
    }
}

/// Kills a writing process at varied instants; each time the journal reopens consistent, the lock is free,
/// and the next run resumes the unfinished release.
#[cfg(unix)]
#[test]
fn journal_survives_kill_at_any_instant() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let d = dir();
    let exe = std::env::current_exe().unwrap();
    let mut interrupted = 0;
    for round in 0..6u64 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "journal::process_tests::journal_crash_child_helper",
                "--nocapture",
            ])
            .args(["--test-threads", "1"])
            .env(CRASH_CHILD_DIR, d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut lines = stdout.lines();
        assert!(
            lines.any(|l| l.is_ok_and(|l| l.trim() == "locked")),
            "the child never took the lock"
        );
        match Journal::lock(d.path()) {
            Err(JournalError::Locked { pid, .. }) => assert_eq!(pid, Some(child.id())),
            other => panic!("expected the child's lock, got {other:?}"),
        }
        std::thread::sleep(std::time::Duration::from_millis(7 + round * 13));
        child.kill().unwrap(); // SIGKILL: no destructors, no unlock
        child.wait().unwrap();

        drop(Journal::lock(d.path()).expect("the lock dies with its holder"));
        let j = Journal::open(d.path()).unwrap();
        let releases = j.releases().unwrap();
        let running = releases
            .iter()
            .filter(|r| r.state == ReleaseState::Running)
            .count();
        assert!(running <= 1, "{releases:?}");
        interrupted += running;
        for release in &releases {
            let steps = j.steps(release.id).unwrap();
            assert_eq!(
                steps.len(),
                5,
                "a release is begun with all its steps or not at all"
            );
            if release.state == ReleaseState::Succeeded {
                assert!(
                    steps.iter().all(|s| s.state == StepState::Done),
                    "{steps:?}"
                );
            }
            for s in &steps {
                let finished = s.finished_at.is_some() && s.uid.is_some() && s.detail.is_some();
                match s.state {
                    StepState::Pending => assert!(s.started_at.is_none() && !finished),
                    StepState::Started => {
                        assert!(s.started_at.is_some() && s.finished_at.is_none())
                    }
                    StepState::Done => assert!(s.started_at.is_some() && finished, "{s:?}"),
                    StepState::Failed => panic!("no step fails here: {s:?}"),
                }
            }
        }
    }
    assert!(interrupted > 0, "no kill landed inside a release");
}
