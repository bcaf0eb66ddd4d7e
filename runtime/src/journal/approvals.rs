//! What approved each plan the engine carries out: one row per approval (the plan's hash, the deploy run it
//! is bound to, how it was given, when), so `resume` and `deploy --resume` continue only a plan somebody
//! approved — never a stored plan a run or a release was pointed at afterwards.
//!
//! Kinds: `approved` (`apply --approve HASH`, `deploy --approve HASH`: writes and image pushes allowed),
//! `unchanged` (a deploy run of a plan that changes nothing and pushes nothing: no approval needed, and
//! none given — it allows no write and no push), `rollback` (the automatic rollback after a failed check,
//! as the target's `rollback_on_failed_checks` allows) and `migrated` (written by the migration to schema
//! 4 for the plans earlier releases applied, which only an approval could have started).
//!
//! Every row written since schema 5 carries a seal under the approving user's key (`seal.rs`); a lookup
//! returns the newest row whose seal this user's key reproduces, or — when none does — the newest row
//! with its [`Seal`], so the engine can say why it refuses it.

use rusqlite::{Row, params};

use super::Journal;
use super::error::{JournalError, sql};
use super::plan_stored;
use super::seal::{ApprovalKey, Seal, Sealed};
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
    /// Whether this user's approval key reproduces the row's seal.
    pub seal: Seal,
}

impl Approval {
    /// Whether the row's seal is this user's.
    pub fn sealed(&self) -> bool {
        self.seal == Seal::Valid
    }
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

const COLUMNS: &str = "id, plan_hash, deploy_run, kind, command, approved_at, seal";

/// A row, its seal checked with `key` (`None`: this user has none).
fn read(key: Option<&ApprovalKey>) -> impl Fn(&Row<'_>) -> rusqlite::Result<Approval> + '_ {
    move |row| {
        let mut approval = Approval {
            id: row.get(0)?,
            plan_hash: row.get(1)?,
            run: row.get(2)?,
            kind: row.get(3)?,
            command: row.get(4)?,
            approved_at: row.get(5)?,
            seal: Seal::NoKey,
        };
        let seal: Option<String> = row.get(6)?;
        if let Some(key) = key {
            approval.seal = key.check(seal.as_deref(), &approval.fields());
        } else if seal.is_none() {
            approval.seal = Seal::Missing;
        }
        Ok(approval)
    }
}

impl Approval {
    fn fields(&self) -> Sealed<'_> {
        Sealed {
            plan_hash: &self.plan_hash,
            run: self.run,
            kind: self.kind,
            command: &self.command,
            approved_at: &self.approved_at,
        }
    }
}

/// Inserts an approval sealed with `key` inside a transaction (for [`Journal::begin_deploy`] and friends).
pub(super) fn insert(
    tx: &rusqlite::Transaction<'_>,
    key: &ApprovalKey,
    plan_hash: &str,
    run: Option<u64>,
    kind: ApprovalKind,
    command: &str,
) -> rusqlite::Result<u64> {
    let approved_at = now_rfc3339();
    let seal = key.seal(&Sealed {
        plan_hash,
        run,
        kind,
        command,
        approved_at: &approved_at,
    });
    tx.execute(
        "INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at, seal) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![plan_hash, run, kind, command, approved_at, seal],
    )?;
    Ok(tx.last_insert_rowid() as u64)
}

/// Of `rows` (newest first), the newest sealed one, else the newest.
fn best(rows: Vec<Approval>) -> Option<Approval> {
    let sealed = rows.iter().position(Approval::sealed);
    rows.into_iter().nth(sealed.unwrap_or(0))
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
        let key = self.sealing_key()?;
        self.write("recording an approval", |tx| {
            if let Err(e) = plan_stored(tx, plan_hash)? {
                return Ok(Err(e));
            }
            Ok(Ok(insert(tx, &key, plan_hash, run, kind, command)?))
        })
    }

    /// The newest approval of `plan_hash` bound to deploy run `run`, or (`run` `None`) the newest one
    /// allowing writes, bound to any run or none — the newest whose seal is this user's when one is
    /// (check [`Approval::seal`] before trusting it).
    pub fn approval(
        &self,
        plan_hash: &str,
        run: Option<u64>,
    ) -> Result<Option<Approval>, JournalError> {
        let key = self.checking_key()?;
        let conn = self.conn();
        let action = "reading an approval";
        let rows = match run {
            Some(run) => {
                let mut stmt = conn
                    .prepare(&format!(
                        "SELECT {COLUMNS} FROM approvals WHERE plan_hash = ?1 AND deploy_run = ?2 \
                         ORDER BY id DESC"
                    ))
                    .map_err(sql(action))?;
                let rows = stmt
                    .query_map(params![plan_hash, run], read(key.as_ref()))
                    .map_err(sql(action))?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql(action))?
            }
            None => {
                let mut stmt = conn
                    .prepare(&format!(
                        "SELECT {COLUMNS} FROM approvals WHERE plan_hash = ?1 AND kind != ?2 \
                         ORDER BY id DESC"
                    ))
                    .map_err(sql(action))?;
                let rows = stmt
                    .query_map(
                        params![plan_hash, ApprovalKind::Unchanged],
                        read(key.as_ref()),
                    )
                    .map_err(sql(action))?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql(action))?
            }
        };
        Ok(best(rows))
    }

    /// Every approval, newest first, each with its seal checked.
    pub fn approvals(&self) -> Result<Vec<Approval>, JournalError> {
        let key = self.checking_key()?;
        let conn = self.conn();
        let action = "reading the approvals";
        let mut stmt = conn
            .prepare(&format!("SELECT {COLUMNS} FROM approvals ORDER BY id DESC"))
            .map_err(sql(action))?;
        let rows = stmt
            .query_map([], read(key.as_ref()))
            .map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }

    /// The key new approvals are sealed with (created on the first approval).
    pub(super) fn sealing_key(&self) -> Result<ApprovalKey, JournalError> {
        if let Some(key) = self.approval_key.get() {
            return Ok(key.clone());
        }
        let key = ApprovalKey::load_or_create()?;
        Ok(self.approval_key.get_or_init(|| key).clone())
    }

    /// The key seals are checked with (`None`: this user has none yet).
    fn checking_key(&self) -> Result<Option<ApprovalKey>, JournalError> {
        if let Some(key) = self.approval_key.get() {
            return Ok(Some(key.clone()));
        }
        Ok(ApprovalKey::load()?.map(|key| self.approval_key.get_or_init(|| key).clone()))
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

    #[test]
    fn approvals_are_sealed_and_a_row_edited_or_planted_by_hand_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.save_plan("h1", "local", "{}").unwrap();
        j.save_plan("h2", "local", "{}").unwrap();
        j.record_approval("h1", None, ApprovalKind::Approved, "apply --approve h1")
            .unwrap();
        let given = j.approval("h1", None).unwrap().expect("approved");
        assert_eq!(given.seal, Seal::Valid);
        let run = j
            .begin_deploy("h2", ApprovalKind::Approved, "deploy --approve h2")
            .unwrap();
        assert!(
            j.approval("h2", Some(run))
                .unwrap()
                .expect("bound")
                .sealed()
        );

        // Planted: a newer row without a seal, and one with the seal of another row. The genuine one is
        // still the one found for h1; h2's run has only planted ones once its own is moved away.
        j.conn()
            .execute(
                "INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at, seal) \
                 SELECT 'h1', NULL, 'approved', 'apply --approve h1', approved_at, NULL FROM approvals \
                 WHERE id = ?1",
                [given.id],
            )
            .unwrap();
        assert_eq!(j.approval("h1", None).unwrap().unwrap().id, given.id);
        j.conn()
            .execute(
                "UPDATE approvals SET deploy_run = NULL WHERE plan_hash = 'h2'",
                [],
            )
            .unwrap();
        j.conn()
            .execute(
                "INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at, seal) \
                 SELECT 'h2', ?1, kind, command, approved_at, seal FROM approvals WHERE id = ?2",
                params![run, given.id],
            )
            .unwrap();
        let copied = j.approval("h2", Some(run)).unwrap().expect("a row");
        assert_eq!(copied.seal, Seal::Invalid);
        assert!(copied.seal.refusal().is_some());
        j.conn()
            .execute(
                "UPDATE approvals SET seal = NULL WHERE id = ?1",
                [copied.id],
            )
            .unwrap();
        assert_eq!(
            j.approval("h2", Some(run)).unwrap().unwrap().seal,
            Seal::Missing
        );
        // An edit of any sealed field breaks the seal.
        j.conn()
            .execute(
                "UPDATE approvals SET approved_at = '2020-01-01T00:00:00Z' WHERE id = ?1",
                [given.id],
            )
            .unwrap();
        assert!(j.approvals().unwrap().iter().all(|a| !a.sealed()));
    }
}
