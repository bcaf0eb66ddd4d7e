//! Unit tests of journal rows edited by hand (the `journal_rows` fuzz target's findings, issue 34): every
//! reader refuses a value piceli never writes as a damaged journal (PCL0150), and nothing it reads is
//! silently replaced.

use super::tests::{dir, ok, planned};
use super::*;
use piceli_core::{Code, Coded};

/// A journal with a succeeded release of two steps, a deploy run with an image, check results, an
/// approval and a backup, then `edit` run on the file as the `sqlite3` shell would (foreign keys off), with
/// CHECK constraints off.
fn edited(edit: &str) -> (tempfile::TempDir, Journal) {
    let d = dir();
    let j = Journal::open(d.path()).unwrap();
    j.save_plan("h1", "dev", "{}").unwrap();
    j.record_approval("h1", None, ApprovalKind::Approved, "apply --approve h1")
        .unwrap();
    let id = j
        .begin_release(
            "h1",
            ReleaseKind::Apply,
            &[planned("a", 0), planned("b", 1)],
        )
        .unwrap();
    for i in 0..2 {
        j.step_started(id, i).unwrap();
        j.step_finished(id, i, &ok("u")).unwrap();
    }
    j.finish_release(id, ReleaseState::Succeeded).unwrap();
    j.record_backup(
        id,
        1,
        "Deployment",
        Some("n"),
        "b",
        "u",
        &serde_json::json!({"a": 1}),
    )
    .unwrap();
    let record = CheckRecord {
        name: "up".into(),
        kind: "http".into(),
        passed: true,
        attempts: 1,
        message: "200".into(),
        duration_ms: 3,
    };
    j.record_check_results(None, Some(id.0), std::slice::from_ref(&record))
        .unwrap();
    drop(j);
    let raw = rusqlite::Connection::open(d.path().join(DB_FILE)).unwrap();
    // The `sqlite3` shell's defaults: foreign keys off (rusqlite's bundled SQLite turns them on).
    let pragmas = "PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON;";
    raw.execute_batch(&format!("{pragmas} {edit}")).unwrap();
    drop(raw);
    let j = Journal::open(d.path()).unwrap();
    (d, j)
}

#[track_caller]
fn damaged<T: std::fmt::Debug>(read: Result<T, JournalError>) -> String {
    let err = read.expect_err("a damaged row");
    assert_eq!(err.code(), Code::JournalDamaged, "{err}");
    err.to_string()
}

#[test]
fn journal_a_row_edited_to_a_value_piceli_never_writes_is_damage() {
    let (_d, j) = edited("UPDATE releases SET state = 'odd';");
    assert!(damaged(j.releases()).contains("`odd` is not a ReleaseState"));
    let (_d, j) = edited("UPDATE releases SET number = -1; UPDATE steps SET release = -1;");
    damaged(j.releases());
    damaged(j.last_succeeded());
    let (_d, j) = edited("UPDATE steps SET idx = idx + 4294967296;");
    damaged(j.steps(ReleaseId(1)));
    let (_d, j) = edited("UPDATE steps SET level = 'high';");
    damaged(j.steps(ReleaseId(1)));
    let (_d, j) = edited("UPDATE steps SET name = CAST(x'ff' AS TEXT);");
    damaged(j.steps(ReleaseId(1)));
    let (_d, j) = edited("UPDATE approvals SET kind = 'forged';");
    damaged(j.approvals());
    let (_d, j) = edited("UPDATE check_results SET attempts = -2;");
    damaged(j.last_check_results());
    let (_d, j) = edited("UPDATE releases SET started_at = x'00ff';");
    damaged(j.release(ReleaseId(1)));
}

#[test]
fn journal_check_outcomes_count_passed_rows_and_never_overflow() {
    let (_d, j) = edited("UPDATE check_results SET passed = 9223372036854775807;");
    assert_eq!(j.check_outcomes().unwrap()[&1], (1, 1));
    let (_d, j) = edited(
        "INSERT INTO check_results SELECT run, idx + 1, deploy_run, release, name, kind, \
         9223372036854775807, attempts, message, duration_ms, finished_at FROM check_results;",
    );
    assert_eq!(j.check_outcomes().unwrap()[&1], (2, 2));
}

#[test]
fn journal_a_backup_whose_object_is_not_json_is_damage_not_null() {
    let (_d, j) = edited("");
    assert_eq!(
        j.backups(None).unwrap()[0].object,
        serde_json::json!({"a": 1})
    );
    let (_d, j) = edited("UPDATE backups SET object_json = '{\"a\": ';");
    damaged(j.backups(None));
    damaged(j.backups(Some(ReleaseId(1))));
}
