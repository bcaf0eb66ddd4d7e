//! What `deploy` and `check` record: deploy runs (their stage, so `deploy --resume` continues one) and
//! check results (grouped by check run; [`Journal::last_check_results`] is the newest run's).

use rusqlite::{OptionalExtension, Row, params};

use super::Journal;
use super::error::{JournalError, sql};
use super::plan_stored;
use super::time::now_rfc3339;
use super::types::{
    ApprovalKind, CheckRecord, CheckResult, DeployRun, DeployStage, DeployState, ReleaseId,
    ReleaseState,
};

const DEPLOY_COLUMNS: &str =
    "id, plan_hash, stage, state, release, rollback_release, message, started_at, finished_at";

fn read_deploy(row: &Row<'_>) -> rusqlite::Result<DeployRun> {
    Ok(DeployRun {
        id: row.get(0)?,
        plan_hash: row.get(1)?,
        stage: row.get(2)?,
        state: row.get(3)?,
        release: row.get(4)?,
        rollback_release: row.get(5)?,
        message: row.get(6)?,
        started_at: row.get(7)?,
        finished_at: row.get(8)?,
    })
}

impl Journal {
    /// Begins a deploy run of the saved plan `plan_hash` at stage `plan`, with the approval it carries it
    /// out under (`kind`, given by `command`) bound to it. A run still `running` (an interrupted one the
    /// user chose not to resume) becomes `abandoned` in the same transaction.
    pub fn begin_deploy(
        &self,
        plan_hash: &str,
        kind: ApprovalKind,
        command: &str,
    ) -> Result<u64, JournalError> {
        let key = self.sealing_key()?;
        self.write("beginning a deploy run", |tx| {
            if let Err(e) = plan_stored(tx, plan_hash)? {
                return Ok(Err(e));
            }
            let now = now_rfc3339();
            tx.execute(
                "UPDATE deploy_runs SET state = ?1, finished_at = ?2 WHERE state = ?3",
                params![DeployState::Abandoned, now, DeployState::Running],
            )?;
            tx.execute(
                "INSERT INTO deploy_runs (plan_hash, stage, state, started_at) VALUES (?1, ?2, ?3, ?4)",
                params![plan_hash, DeployStage::Plan, DeployState::Running, now],
            )?;
            let id = tx.last_insert_rowid() as u64;
            super::approvals::insert(tx, &key, plan_hash, Some(id), kind, command)?;
            Ok(Ok(id))
        })
    }

    /// Records that run `id` entered `stage`; `release` (when given) is the release it made.
    pub fn deploy_stage(
        &self,
        id: u64,
        stage: DeployStage,
        release: Option<u64>,
    ) -> Result<(), JournalError> {
        self.write("recording a deploy stage", |tx| {
            let n = tx.execute(
                "UPDATE deploy_runs SET stage = ?2, release = COALESCE(?3, release), message = '' \
                 WHERE id = ?1",
                params![id, stage, release],
            )?;
            Ok(if n == 1 {
                Ok(())
            } else {
                Err(JournalError::Corrupt(format!(
                    "deploy run {id} is not in the journal"
                )))
            })
        })
    }

    /// Records that run `id` carries out the stored plan `plan_hash` (a run journaled from its first stage
    /// with the approved hash whose fresh plan has no changes: that plan needs no approval), with the
    /// approval it does that under, in one transaction.
    pub fn deploy_replan(
        &self,
        id: u64,
        plan_hash: &str,
        kind: ApprovalKind,
        command: &str,
    ) -> Result<(), JournalError> {
        let key = self.sealing_key()?;
        self.write("recording a deploy run's plan", |tx| {
            tx.execute(
                "UPDATE deploy_runs SET plan_hash = ?2 WHERE id = ?1",
                params![id, plan_hash],
            )?;
            super::approvals::insert(tx, &key, plan_hash, Some(id), kind, command)?;
            Ok(Ok(()))
        })
    }

    /// Records why run `id` halted without finishing (it stays `running`, so `deploy --resume` continues
    /// it from its stage).
    pub fn deploy_interrupted(&self, id: u64, message: &str) -> Result<(), JournalError> {
        self.write("recording a deploy interruption", |tx| {
            tx.execute(
                "UPDATE deploy_runs SET message = ?2 WHERE id = ?1",
                params![id, message],
            )?;
            Ok(Ok(()))
        })
    }

    /// Finishes run `id` in `state` (stage `done`), with the rollback release it made, if any.
    pub fn finish_deploy(
        &self,
        id: u64,
        state: DeployState,
        rollback_release: Option<u64>,
        message: &str,
    ) -> Result<(), JournalError> {
        self.write("finishing a deploy run", |tx| {
            tx.execute(
                "UPDATE deploy_runs SET stage = ?2, state = ?3, rollback_release = ?4, message = ?5, \
                 finished_at = ?6 WHERE id = ?1",
                params![
                    id,
                    DeployStage::Done,
                    state,
                    rollback_release,
                    message,
                    now_rfc3339()
                ],
            )?;
            Ok(Ok(()))
        })
    }

    /// The deploy run `deploy --resume` continues: the newest `running` one, if any.
    pub fn unfinished_deploy(&self) -> Result<Option<DeployRun>, JournalError> {
        let query = format!(
            "SELECT {DEPLOY_COLUMNS} FROM deploy_runs WHERE state = ?1 ORDER BY id DESC LIMIT 1"
        );
        self.conn()
            .query_row(&query, [DeployState::Running], read_deploy)
            .optional()
            .map_err(sql("reading a deploy run"))
    }

    /// Every deploy run, newest first.
    pub fn deploy_runs(&self) -> Result<Vec<DeployRun>, JournalError> {
        let conn = self.conn();
        let query = format!("SELECT {DEPLOY_COLUMNS} FROM deploy_runs ORDER BY id DESC");
        let mut stmt = conn.prepare(&query).map_err(sql("listing deploy runs"))?;
        let rows = stmt
            .query_map([], read_deploy)
            .map_err(sql("listing deploy runs"))?;
        rows.collect::<Result<_, _>>()
            .map_err(sql("listing deploy runs"))
    }

    /// Records one check run's results in one transaction and returns the check run's number.
    pub fn record_check_results(
        &self,
        deploy_run: Option<u64>,
        release: Option<u64>,
        results: &[CheckRecord],
    ) -> Result<u64, JournalError> {
        self.write("recording check results", |tx| {
            let run: u64 =
                tx.query_row("SELECT COALESCE(MAX(run), 0) + 1 FROM check_results", [], |r| {
                    r.get(0)
                })?;
            let now = now_rfc3339();
            let mut insert = tx.prepare(
                "INSERT INTO check_results (run, idx, deploy_run, release, name, kind, passed, attempts, \
                 message, duration_ms, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            for (idx, r) in results.iter().enumerate() {
                insert.execute(params![
                    run,
                    idx as u64,
                    deploy_run,
                    release,
                    r.name,
                    r.kind,
                    r.passed,
                    r.attempts,
                    r.message,
                    r.duration_ms,
                    now,
                ])?;
            }
            Ok(Ok(run))
        })
    }

    /// For each release whose checks ran: `(passed, total)` of its newest check run. `passed` counts the
    /// rows whose `passed` is not 0 (what the writer stores is 0 or 1; summing the column itself would
    /// overflow on a hand-edited value).
    pub fn check_outcomes(
        &self,
    ) -> Result<std::collections::BTreeMap<u64, (u32, u32)>, JournalError> {
        let conn = self.conn();
        let action = "reading check outcomes";
        let mut stmt = conn
            .prepare(
                "SELECT release, SUM(passed <> 0), COUNT(*) FROM check_results c WHERE release IS NOT NULL \
                 AND run = (SELECT MAX(run) FROM check_results d WHERE d.release = c.release) \
                 GROUP BY release",
            )
            .map_err(sql(action))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, u64>(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }

    /// The newest check run's results, in declaration order (empty when checks never ran).
    pub fn last_check_results(&self) -> Result<Vec<CheckResult>, JournalError> {
        let conn = self.conn();
        let action = "reading check results";
        let mut stmt = conn
            .prepare(
                "SELECT name, kind, passed, attempts, message, release, finished_at FROM check_results \
                 WHERE run = (SELECT MAX(run) FROM check_results) ORDER BY idx",
            )
            .map_err(sql(action))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(CheckResult {
                    name: r.get(0)?,
                    kind: r.get(1)?,
                    passed: r.get(2)?,
                    attempts: r.get(3)?,
                    message: r.get(4)?,
                    release: r.get(5)?,
                    finished_at: r.get(6)?,
                })
            })
            .map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }

    /// Marks a `succeeded` release whose checks failed as `failed`, so it is no longer live or a rollback
    /// point (the one move out of `succeeded`; only `deploy` makes it, after its checks).
    pub fn fail_release_after_checks(&self, release: ReleaseId) -> Result<(), JournalError> {
        self.write("marking a release whose checks failed", |tx| {
            let n = tx.execute(
                "UPDATE releases SET state = ?2 WHERE number = ?1 AND state = ?3",
                params![release.0, ReleaseState::Failed, ReleaseState::Succeeded],
            )?;
            Ok(if n == 1 {
                Ok(())
            } else {
                Err(JournalError::UnknownRelease(release))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::ReleaseKind;

    fn record(name: &str, passed: bool) -> CheckRecord {
        CheckRecord {
            name: name.into(),
            kind: "http".into(),
            passed,
            attempts: if passed { 1 } else { 3 },
            message: if passed {
                "200".into()
            } else {
                "got 500".into()
            },
            duration_ms: 5,
        }
    }

    #[test]
    fn last_check_results_are_the_newest_runs_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        assert!(j.last_check_results().unwrap().is_empty());
        j.record_check_results(None, Some(1), &[record("a", true), record("b", true)])
            .unwrap();
        let run = j
            .record_check_results(None, Some(2), &[record("b", false), record("a", true)])
            .unwrap();
        assert_eq!(run, 2);
        let last = j.last_check_results().unwrap();
        let seen: Vec<_> = last
            .iter()
            .map(|r| (r.name.as_str(), r.passed, r.attempts, r.release))
            .collect();
        assert_eq!(seen, [("b", false, 3, Some(2)), ("a", true, 1, Some(2))]);
        assert_eq!(last[0].message, "got 500");
        assert!(last[0].finished_at.ends_with('Z'));
    }

    #[test]
    fn a_deploy_run_moves_through_stages_and_a_new_one_abandons_it() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        assert!(matches!(
            j.begin_deploy("nope", ApprovalKind::Approved, "deploy --approve nope"),
            Err(JournalError::UnknownPlan(_))
        ));
        j.save_plan("h1", "local", "{}").unwrap();
        let first = j
            .begin_deploy("h1", ApprovalKind::Approved, "deploy --approve h1")
            .unwrap();
        j.deploy_stage(first, DeployStage::Ready, Some(4)).unwrap();
        j.deploy_interrupted(first, "PCL0115: not ready").unwrap();
        let open = j.unfinished_deploy().unwrap().unwrap();
        assert_eq!(
            (open.id, open.stage, open.release, open.message.as_str()),
            (first, DeployStage::Ready, Some(4), "PCL0115: not ready")
        );
        let second = j
            .begin_deploy("h1", ApprovalKind::Approved, "deploy --approve h1")
            .unwrap();
        let runs = j.deploy_runs().unwrap();
        assert_eq!(runs[1].state, DeployState::Abandoned);
        j.finish_deploy(second, DeployState::Failed, Some(5), "check failed")
            .unwrap();
        assert!(j.unfinished_deploy().unwrap().is_none());
        let done = &j.deploy_runs().unwrap()[0];
        assert_eq!(
            (done.stage, done.state, done.rollback_release),
            (DeployStage::Done, DeployState::Failed, Some(5))
        );
    }

    #[test]
    fn a_release_whose_checks_failed_is_no_longer_live() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.save_plan("h1", "local", "{}").unwrap();
        let r = j.begin_release("h1", ReleaseKind::Apply, &[]).unwrap();
        j.finish_release(r, ReleaseState::Succeeded).unwrap();
        j.fail_release_after_checks(r).unwrap();
        assert!(j.last_succeeded().unwrap().is_none());
        assert_eq!(j.release(r).unwrap().unwrap().state, ReleaseState::Failed);
        assert!(
            j.fail_release_after_checks(r).is_err(),
            "only from succeeded"
        );
    }

    #[test]
    fn a_version_1_journal_is_migrated_and_keeps_its_releases() {
        let dir = tempfile::tempdir().unwrap();
        {
            let raw = rusqlite::Connection::open(dir.path().join(super::super::DB_FILE)).unwrap();
            raw.execute_batch(super::super::schema::SCHEMA_V1).unwrap();
            raw.pragma_update(None, "user_version", 1).unwrap();
            raw.execute(
                "INSERT INTO plans (hash, target, plan_json, created_at) VALUES ('h', 't', '{}', 'x')",
                [],
            )
            .unwrap();
            raw.execute(
                "INSERT INTO releases (number, plan_hash, kind, state, started_at) \
                 VALUES (1, 'h', 'apply', 'succeeded', 'x')",
                [],
            )
            .unwrap();
        }
        let j = Journal::open(dir.path()).unwrap();
        assert_eq!(j.last_succeeded().unwrap().unwrap().number, 1);
        assert!(j.last_check_results().unwrap().is_empty());
        assert!(j.unfinished_deploy().unwrap().is_none());
        // Its release could only have begun approved: the migration says so.
        let approval = j.approval("h", None).unwrap().expect("migrated approval");
        assert_eq!(approval.kind, ApprovalKind::Migrated);
        assert!(!approval.sealed(), "migrated rows carry no seal");
        assert!(
            approval.command.contains("release 1"),
            "{}",
            approval.command
        );
    }

    #[test]
    fn a_version_3_journal_gets_approvals_for_releases_and_none_for_deploy_runs() {
        let dir = tempfile::tempdir().unwrap();
        // A journal as piceli with schema 3 left it: a running release and an unfinished deploy run.
        {
            let raw = rusqlite::Connection::open(dir.path().join(super::super::DB_FILE)).unwrap();
            raw.execute_batch(super::super::schema::SCHEMA_V1).unwrap();
            raw.execute_batch(super::super::schema::SCHEMA_V2).unwrap();
            raw.execute_batch(super::super::schema::SCHEMA_V3).unwrap();
            raw.pragma_update(None, "user_version", 3).unwrap();
            for h in ["h1", "h2"] {
                raw.execute(
                    "INSERT INTO plans (hash, target, plan_json, created_at) VALUES (?1, 't', '{}', 'x')",
                    [h],
                )
                .unwrap();
            }
            raw.execute(
                "INSERT INTO releases (number, plan_hash, kind, state, started_at) \
                 VALUES (1, 'h1', 'apply', 'running', '2026-01-01T00:00:00Z')",
                [],
            )
            .unwrap();
            raw.execute(
                "INSERT INTO deploy_runs (plan_hash, stage, state, started_at) \
                 VALUES ('h2', 'deliver', 'running', 'x')",
                [],
            )
            .unwrap();
        }
        let j = Journal::open(dir.path()).unwrap();
        let run = j.unfinished_deploy().unwrap().expect("the run is kept");
        assert_eq!(j.approval("h2", Some(run.id)).unwrap(), None);
        assert_eq!(j.approval("h2", None).unwrap(), None);
        let migrated = j.approval("h1", None).unwrap().expect("the release's plan");
        assert_eq!(
            (migrated.kind, migrated.approved_at.as_str()),
            (ApprovalKind::Migrated, "2026-01-01T00:00:00Z")
        );
    }
}
