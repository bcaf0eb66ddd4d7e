//! What approved each plan the engine carries out: one row per approval (the plan's hash, the deploy run it
//! is bound to, how it was given, when), so `resume` and `deploy --resume` continue only a plan somebody
//! approved — never a stored plan a run or a release was pointed at afterwards.
//!
//! Kinds: `approved` (`apply --approve HASH`, `deploy --approve HASH`: writes and image pushes allowed),
//! `unchanged` (a deploy run of a plan that changes nothing and pushes nothing: no approval needed, and
//! none given — it allows no write and no push), `rollback` (the automatic rollback after a failed check,
//! as the target's `rollback_on_failed_checks` allows) and `migrated` (written by the migration to schema
//! 4 for the plans earlier releases applied, which only an approval could have started).

use rusqlite::{OptionalExtension, Row, params};

use super::Journal;
use super::error::{JournalError, sql};
use super::plan_stored;
use super::time::now_rfc3339;
use super::types::{ApprovalKind, Release};

impl ApprovalKind {
    /// Whether it allows writing objects and pushing images (everything but `unchanged`).
    pub fn allows_writes(self) -> bool {
        self != ApprovalKind::Unchanged
    }
}

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Its id (1, 2, …).
    pub id: u64,
    /// The plan approved.
    pub plan_hash: String,
    /// The deploy run it is bound to (`None`: `apply --approve`, or migrated).
    pub run: Option<u64>,
    /// How it was given.
    pub kind: ApprovalKind,
    /// The command that gave it (`deploy --approve 1a2b3c4d5e6f`).
    pub command: String,
    /// When (RFC 3339 UTC).
    pub approved_at: String,
}

/// The approval that started `release`, among `approvals` (newest first, as [`Journal::approvals`] gives
/// them): the newest one of its plan given before it began — or, for a release older than the approvals
/// table, the one the migration recorded for its plan.
pub fn approval_of<'a>(approvals: &'a [Approval], release: &Release) -> Option<&'a Approval> {
    let of_plan = |a: &&Approval| a.plan_hash == release.plan_hash;
    approvals
        .iter()
        .filter(of_plan)
        .find(|a| a.approved_at <= release.started_at)
        .or_else(|| {
            approvals
                .iter()
                .filter(of_plan)
                .find(|a| a.kind == ApprovalKind::Migrated)
        })
}

const COLUMNS: &str = "id, plan_hash, deploy_run, kind, command, approved_at";

fn read(row: &Row<'_>) -> rusqlite::Result<Approval> {
    Ok(Approval {
        id: row.get(0)?,
        plan_hash: row.get(1)?,
        run: row.get(2)?,
        kind: row.get(3)?,
        command: row.get(4)?,
        approved_at: row.get(5)?,
    })
}

/// Inserts an approval inside a transaction (for [`Journal::begin_deploy`] and friends).
pub(super) fn insert(
    tx: &rusqlite::Transaction<'_>,
    plan_hash: &str,
    run: Option<u64>,
    kind: ApprovalKind,
    command: &str,
) -> rusqlite::Result<u64> {
    tx.execute(
        "INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![plan_hash, run, kind, command, now_rfc3339()],
    )?;
    Ok(tx.last_insert_rowid() as u64)
}

impl Journal {
    /// Records that the stored plan `plan_hash` was approved (`run`: bound to that deploy run).
    pub fn record_approval(
        &self,
        plan_hash: &str,
        run: Option<u64>,
        kind: ApprovalKind,
        command: &str,
    ) -> Result<u64, JournalError> {
        self.write("recording an approval", |tx| {
            if let Err(e) = plan_stored(tx, plan_hash)? {
                return Ok(Err(e));
            }
            Ok(Ok(insert(tx, plan_hash, run, kind, command)?))
        })
    }

    /// The newest approval of `plan_hash` bound to deploy run `run`, or (`run` `None`) the newest one
    /// allowing writes, bound to any run or none.
    pub fn approval(
        &self,
        plan_hash: &str,
        run: Option<u64>,
    ) -> Result<Option<Approval>, JournalError> {
        let conn = self.conn();
        let action = "reading an approval";
        match run {
            Some(run) => conn
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM approvals WHERE plan_hash = ?1 AND deploy_run = ?2 \
                         ORDER BY id DESC LIMIT 1"
                    ),
                    params![plan_hash, run],
                    read,
                )
                .optional()
                .map_err(sql(action)),
            None => conn
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM approvals WHERE plan_hash = ?1 AND kind != ?2 \
                         ORDER BY id DESC LIMIT 1"
                    ),
                    params![plan_hash, ApprovalKind::Unchanged],
                    read,
                )
                .optional()
                .map_err(sql(action)),
        }
    }

    /// Every approval, newest first.
    pub fn approvals(&self) -> Result<Vec<Approval>, JournalError> {
        let conn = self.conn();
        let action = "reading the approvals";
        let mut stmt = conn
            .prepare(&format!("SELECT {COLUMNS} FROM approvals ORDER BY id DESC"))
            .map_err(sql(action))?;
        let rows = stmt.query_map([], read).map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_is_found_by_plan_and_run_and_unchanged_allows_no_writes() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.save_plan("h1", "local", "{}").unwrap();
        assert!(matches!(
            j.record_approval("nope", None, ApprovalKind::Approved, "apply --approve nope"),
            Err(JournalError::UnknownPlan(_))
        ));
        let run = j
            .begin_deploy("h1", ApprovalKind::Unchanged, "deploy")
            .unwrap();
        let bound = j.approval("h1", Some(run)).unwrap().expect("bound");
        assert_eq!(
            (bound.kind, bound.run),
            (ApprovalKind::Unchanged, Some(run))
        );
        assert_eq!(j.approval("h1", Some(run + 1)).unwrap(), None);
        assert_eq!(
            j.approval("h1", None).unwrap(),
            None,
            "unchanged allows no writes"
        );
        j.record_approval("h1", None, ApprovalKind::Approved, "apply --approve h1")
            .unwrap();
        let any = j.approval("h1", None).unwrap().expect("approved");
        assert_eq!(any.command, "apply --approve h1");
        assert!(any.kind.allows_writes());
        assert_eq!(j.approvals().unwrap().len(), 2);
    }
}
