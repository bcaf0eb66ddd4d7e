//! Unit tests of the journal, each in its own temporary state directory.

use super::*;

pub(super) fn dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

pub(super) fn planned(name: &str, level: u32) -> PlannedStep {
    PlannedStep {
        object: crate::identity::ObjectKey::new("Deployment", Some("hello"), name),
        action: "create".into(),
        level,
        desired_digest: Some(format!("blake3:{name}")),
    }
}

pub(super) fn ok(uid: &str) -> StepOutcome {
    StepOutcome {
        ok: true,
        detail: "applied".into(),
        uid: Some(uid.into()),
        resource_version: Some("7".into()),
        digest: Some("blake3:live".into()),
    }
}

/// A journal with plan `h1` saved and a running release of three steps.
fn started(dir: &Path) -> (Journal, ReleaseId) {
    let j = Journal::open(dir).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    let steps = [planned("a", 0), planned("b", 1), planned("c", 1)];
    let id = j.begin_release("h1", ReleaseKind::Apply, &steps).unwrap();
    (j, id)
}

fn states(j: &Journal, id: ReleaseId) -> Vec<StepState> {
    j.steps(id).unwrap().into_iter().map(|s| s.state).collect()
}

#[test]
fn journal_open_reopen_keeps_data() {
    let d = dir();
    let state = d.path().join("nested/state");
    let (j, id) = started(&state);
    j.step_started(id, 0).unwrap();
    j.step_finished(id, 0, &ok("u-0")).unwrap();
    assert_eq!(j.path(), state.join(DB_FILE));
    drop(j);

    let j = Journal::open(&state).unwrap();
    assert_eq!(j.load_plan("h1").unwrap().as_deref(), Some("{}"));
    let release = j.release(id).unwrap().unwrap();
    assert_eq!((release.number, release.state), (1, ReleaseState::Running));
    let step = &j.steps(id).unwrap()[0];
    assert_eq!(step.state, StepState::Done);
    assert_eq!(step.uid.as_deref(), Some("u-0"));
    assert_eq!(step.resource_version.as_deref(), Some("7"));
    assert_eq!(step.digest.as_deref(), Some("blake3:live"));
    assert_eq!(step.detail.as_deref(), Some("applied"));
    assert_eq!(step.desired_digest.as_deref(), Some("blake3:a"));
    assert!(step.started_at.is_some() && step.finished_at.is_some());
}

#[test]
fn journal_uses_wal_and_full_sync() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    let conn = j.conn();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    let sync: i64 = conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap();
    let fk: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        (mode.as_str(), sync, fk, version),
        ("wal", 2, 1, SCHEMA_VERSION)
    );
}

#[cfg(unix)]
#[test]
fn journal_state_dir_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    let state = d.path().join("state");
    Journal::open(&state).unwrap();
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
}

#[test]
fn journal_release_numbers_increase() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    let mut ids = Vec::new();
    for kind in [
        ReleaseKind::Apply,
        ReleaseKind::Rollback,
        ReleaseKind::Apply,
    ] {
        let id = j.begin_release("h1", kind, &[]).unwrap();
        j.finish_release(id, ReleaseState::Succeeded).unwrap();
        ids.push(id);
    }
    assert_eq!(ids, [ReleaseId(1), ReleaseId(2), ReleaseId(3)]);
    let all = j.releases().unwrap();
    let numbers: Vec<u64> = all.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [3, 2, 1], "newest first");
    assert_eq!(all[1].kind, ReleaseKind::Rollback);
    assert!(
        all.iter()
            .all(|r| r.id == ReleaseId(r.number) && r.finished_at.is_some())
    );
    assert_eq!(
        j.last_succeeded().unwrap().map(|r| r.id),
        Some(ReleaseId(3))
    );
    assert_eq!(j.release(ReleaseId(9)).unwrap(), None);
    assert!(matches!(
        j.steps(ReleaseId(9)),
        Err(JournalError::UnknownRelease(ReleaseId(9)))
    ));
}

#[test]
fn journal_begin_release_refusals() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    let err = j
        .begin_release("nope", ReleaseKind::Apply, &[])
        .unwrap_err();
    assert!(
        matches!(err, JournalError::UnknownPlan(ref h) if h == "nope"),
        "{err}"
    );
    j.save_plan("h1", "dev", "{}").unwrap();
    let first = j
        .begin_release("h1", ReleaseKind::Apply, &[planned("a", 0)])
        .unwrap();
    let err = j.begin_release("h1", ReleaseKind::Apply, &[]).unwrap_err();
    assert!(
        matches!(err, JournalError::ReleaseRunning(id) if id == first),
        "{err}"
    );
    assert_eq!(
        j.releases().unwrap().len(),
        1,
        "nothing written by the refusal"
    );
    j.finish_release(first, ReleaseState::Superseded).unwrap();
    assert_eq!(
        j.begin_release("h1", ReleaseKind::Apply, &[]).unwrap(),
        ReleaseId(2)
    );
}

#[test]
fn journal_step_transitions() {
    let d = dir();
    let (j, id) = started(d.path());
    assert_eq!(states(&j, id), [StepState::Pending; 3]);
    let steps = j.steps(id).unwrap();
    assert_eq!(steps.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(steps[2].object.name, "c");
    assert_eq!(steps[2].level, 1);

    // pending -> done directly is refused; so is an unknown step.
    let err = j.step_finished(id, 0, &ok("u")).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::StepTransition {
                from: StepState::Pending,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        j.step_started(id, 3),
        Err(JournalError::UnknownStep { index: 3, .. })
    ));
    assert!(matches!(
        j.step_started(ReleaseId(5), 0),
        Err(JournalError::UnknownRelease(_))
    ));

    j.step_started(id, 0).unwrap();
    assert_eq!(states(&j, id)[0], StepState::Started);
    j.step_finished(id, 0, &ok("u-0")).unwrap();
    let err = j.step_started(id, 0).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::StepTransition {
                from: StepState::Done,
                ..
            }
        ),
        "{err}"
    );
    let err = j.step_finished(id, 0, &ok("u-0")).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::StepTransition {
                from: StepState::Done,
                ..
            }
        ),
        "{err}"
    );

    // started -> failed -> started again (a retry clears the old outcome) -> done.
    j.step_started(id, 1).unwrap();
    let failed = StepOutcome {
        ok: false,
        detail: "conflict".into(),
        ..StepOutcome::default()
    };
    j.step_finished(id, 1, &failed).unwrap();
    assert_eq!(j.steps(id).unwrap()[1].detail.as_deref(), Some("conflict"));
    j.step_started(id, 1).unwrap();
    let retried = &j.steps(id).unwrap()[1];
    assert_eq!(
        (retried.state, retried.detail.as_deref()),
        (StepState::Started, None)
    );
    j.step_finished(id, 1, &ok("u-1")).unwrap();
    assert_eq!(
        states(&j, id),
        [StepState::Done, StepState::Done, StepState::Pending]
    );

    // A release cannot succeed with a step not done; stopped, its steps are frozen; resumed, they move.
    let err = j.finish_release(id, ReleaseState::Succeeded).unwrap_err();
    assert!(
        matches!(err, JournalError::StepsNotDone { unfinished: 1, .. }),
        "{err}"
    );
    j.finish_release(id, ReleaseState::Stopped).unwrap();
    assert!(j.release(id).unwrap().unwrap().finished_at.is_some());
    let err = j.step_started(id, 2).unwrap_err();
    assert!(matches!(
        err,
        JournalError::ReleaseNotRunning {
            state: ReleaseState::Stopped,
            ..
        }
    ));
    j.finish_release(id, ReleaseState::Running).unwrap();
    assert_eq!(j.release(id).unwrap().unwrap().finished_at, None);
    j.step_started(id, 2).unwrap();
    j.step_finished(id, 2, &ok("u-2")).unwrap();
    j.finish_release(id, ReleaseState::Succeeded).unwrap();
    j.finish_release(id, ReleaseState::Succeeded).unwrap(); // the same state again: a no-op
    let err = j.finish_release(id, ReleaseState::Running).unwrap_err();
    assert!(matches!(
        err,
        JournalError::ReleaseTransition {
            from: ReleaseState::Succeeded,
            ..
        }
    ));
    assert_eq!(j.unfinished().unwrap(), None);
}

#[test]
fn journal_unfinished_after_crash() {
    let d = dir();
    let (j, id) = started(d.path());
    j.step_started(id, 0).unwrap();
    j.step_finished(id, 0, &ok("u-0")).unwrap();
    j.step_started(id, 1).unwrap();
    drop(j); // the process "dies" during step 1's cluster write

    let j = Journal::open(d.path()).unwrap();
    let release = j.unfinished().unwrap().expect("a running release");
    assert_eq!((release.id, release.state), (id, ReleaseState::Running));
    assert_eq!(release.finished_at, None);
    assert_eq!(
        states(&j, id),
        [StepState::Done, StepState::Started, StepState::Pending]
    );
    assert_eq!(j.last_succeeded().unwrap(), None);
    // Resume: step 1 is read back and recorded, step 2 runs, the release succeeds.
    j.step_finished(id, 1, &ok("u-1")).unwrap();
    j.step_started(id, 2).unwrap();
    j.step_finished(id, 2, &ok("u-2")).unwrap();
    j.finish_release(id, ReleaseState::Succeeded).unwrap();
    assert_eq!(j.unfinished().unwrap(), None);
    assert_eq!(j.last_succeeded().unwrap().map(|r| r.id), Some(id));
}

#[test]
fn journal_plan_round_trip() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    let plan = r#"{"hash":"h1","actions":[{"kind":"Secret","name":"api","digest":"blake3:…"}]}"#;
    assert_eq!(j.load_plan("h1").unwrap(), None);
    j.save_plan("h1", "dev", plan).unwrap();
    j.save_plan("h1", "dev", plan).unwrap(); // idempotent
    assert_eq!(j.load_plan("h1").unwrap().as_deref(), Some(plan));
    assert_eq!(j.load_plan("h2").unwrap(), None);
    let err = j.save_plan("h1", "dev", "{}").unwrap_err();
    assert!(
        matches!(err, JournalError::PlanConflict(ref h) if h == "h1"),
        "{err}"
    );
    assert!(matches!(
        j.save_plan("h1", "prod", plan),
        Err(JournalError::PlanConflict(_))
    ));
    assert_eq!(j.load_plan("h1").unwrap().as_deref(), Some(plan));
}

#[test]
fn journal_refuses_newer_schema() {
    let d = dir();
    Journal::open(d.path()).unwrap();
    let raw = Connection::open(d.path().join(DB_FILE)).unwrap();
    raw.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(raw);
    let err = Journal::open(d.path()).unwrap_err();
    match &err {
        JournalError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!((*found, *supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        other => panic!("expected NewerSchema, got {other}"),
    }
    assert!(err.to_string().contains("newer"), "{err}");
}

#[test]
fn journal_refuses_a_file_that_is_not_a_database() {
    let d = dir();
    std::fs::write(d.path().join(DB_FILE), vec![b'x'; 4096]).unwrap();
    let err = Journal::open(d.path()).unwrap_err();
    assert!(matches!(err, JournalError::Corrupt(_)), "{err}");
}

#[test]
fn journal_records_steps_from_parallel_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Journal>();
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    let steps: Vec<PlannedStep> = (0..16).map(|i| planned(&format!("s{i}"), 0)).collect();
    let id = j.begin_release("h1", ReleaseKind::Apply, &steps).unwrap();
    std::thread::scope(|s| {
        for index in 0..16 {
            let j = &j;
            s.spawn(move || {
                j.step_started(id, index).unwrap();
                j.step_finished(id, index, &ok(&format!("u-{index}")))
                    .unwrap();
            });
        }
    });
    assert_eq!(states(&j, id), [StepState::Done; 16]);
    j.finish_release(id, ReleaseState::Succeeded).unwrap();
}

#[test]
fn journal_corrupt_state_is_reported() {
    let d = dir();
    let (j, id) = started(d.path());
    drop(j);
    let raw = Connection::open(d.path().join(DB_FILE)).unwrap();
    // Bypass the CHECK constraint the way a damaged or hand-edited file could.
    raw.execute_batch("PRAGMA ignore_check_constraints = ON; UPDATE steps SET state = 'odd';")
        .unwrap();
    drop(raw);
    let j = Journal::open(d.path()).unwrap();
    let err = j.steps(id).unwrap_err();
    assert!(
        err.to_string().contains("`odd` is not a StepState"),
        "{err}"
    );
}

#[test]
fn journal_an_emptied_file_is_refused_never_reinitialized() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    drop(j);
    let db = d.path().join(DB_FILE);
    std::fs::write(&db, b"").unwrap();
    let err = Journal::open(d.path()).unwrap_err();
    assert!(matches!(err, JournalError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("0 bytes"), "{err}");
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "left as it was");

    std::fs::write(
        &db,
        b"these bytes are not an SQLite database, not even close to one",
    )
    .unwrap();
    let err = Journal::open(d.path()).unwrap_err();
    assert!(matches!(err, JournalError::Corrupt(_)), "{err}");
}

#[test]
fn journal_a_missing_table_is_refused() {
    let d = dir();
    drop(Journal::open(d.path()).unwrap());
    let conn = rusqlite::Connection::open(d.path().join(DB_FILE)).unwrap();
    conn.execute_batch("DROP TABLE check_results;").unwrap();
    drop(conn);
    let err = Journal::open(d.path()).unwrap_err();
    assert!(
        err.to_string().contains("no `check_results` table"),
        "{err}"
    );
}

#[test]
fn journal_a_missing_file_is_created_complete_and_leaves_nothing_beside_it() {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    assert_eq!(j.releases().unwrap().len(), 0);
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".new-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[cfg(unix)]
#[test]
fn journal_files_are_private_in_an_open_directory() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let j = Journal::open(d.path()).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    for file in [DB_FILE, "journal.db-wal", "journal.db-shm"] {
        let mode = std::fs::metadata(d.path().join(file))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file}: {mode:o}");
    }
    crate::engine::secrets::digest_key(d.path()).unwrap();
    let mode = std::fs::metadata(d.path().join("secret-digest.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "secret-digest.key: {mode:o}");
    assert_eq!(
        crate::engine::secrets::digest_key(d.path()).unwrap(),
        crate::engine::secrets::digest_key(d.path()).unwrap(),
        "the key is made once"
    );
}
