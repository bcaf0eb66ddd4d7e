//! The journal: a durable record of plans, releases and every step of every release.
//!
//! One SQLite file per state directory, `DIR/journal.db`, in WAL mode with `synchronous=FULL` (each commit
//! is fsynced) and a busy timeout, so `stop`, `history` or `status` in another process read and write it
//! while an apply runs. Every state change is one transaction: a kill at any instant leaves the database as
//! it was before or after that change, never between.
//!
//! The engine's protocol for one release:
//!
//! 1. [`Journal::lock`] — one apply per state directory at a time.
//! 2. [`Journal::save_plan`] at `plan` time; [`Journal::load_plan`] at `apply --approve HASH`.
//! 3. [`Journal::begin_release`] — the release and all its steps, `pending`, in one transaction.
//! 4. Per step: [`Journal::step_started`] (committed before the cluster write), the write,
//!    [`Journal::step_finished`]. Between steps, [`Journal::stop_requested`].
//! 5. [`Journal::finish_release`].
//!
//! After a crash, [`Journal::unfinished`] is the `running` release; its `started` steps are the writes that
//! may or may not have landed (read the object back to decide), its `pending` steps never ran.
//!
//! **No secret values.** The journal stores only what it is given: object identity, actions, digests, detail
//! text, and plan JSON in which secret values are already replaced by keyed digests. Callers must keep it so.

mod approvals;
mod backups;
mod deploys;
mod error;
pub mod fault;
mod images;
mod lock;
mod rows;
mod schema;
mod seal;
mod time;
mod types;

#[cfg(test)]
mod edited_tests;
#[cfg(test)]
mod process_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

pub use approvals::{Approval, approval_of};
pub use backups::Backup;
pub use error::JournalError;
pub use lock::{ApplyLock, LOCK_FILE};
pub use schema::{BUSY_TIMEOUT, DB_FILE, SCHEMA_VERSION, create_dir as create_state_dir};
pub use seal::{KEY_FILE_ENV as APPROVAL_KEY_ENV, Seal, key_path as approval_key_path};
pub use types::{
    ApprovalKind, CheckRecord, CheckResult, DeployImage, DeployRun, DeployStage, DeployState,
    PlannedStep, Release, ReleaseId, ReleaseKind, ReleaseState, Step, StepOutcome, StepState,
};

use error::sql;
use rows::{RELEASE_COLUMNS, STEP_COLUMNS, read_release, read_step, release_state, running_step};
use time::now_rfc3339;

/// An open journal. `Send + Sync`: steps of one level may be recorded from parallel tasks (each call takes
/// an internal lock for its transaction).
#[derive(Debug)]
pub struct Journal {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// This user's approval key, once read (see `seal.rs`).
    approval_key: std::sync::OnceLock<seal::ApprovalKey>,
}

/// The `control` key of a pending stop request.
const STOP_KEY: &str = "stop";

/// Whether the plan `plan_hash` is stored (`Err(UnknownPlan)` inside: the transaction itself worked):
/// what every record that names a plan checks first.
pub(crate) fn plan_stored(
    tx: &rusqlite::Transaction<'_>,
    plan_hash: &str,
) -> rusqlite::Result<Result<(), JournalError>> {
    let known: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM plans WHERE hash = ?1)",
        [plan_hash],
        |r| r.get(0),
    )?;
    Ok(if known {
        Ok(())
    } else {
        Err(JournalError::UnknownPlan(plan_hash.to_owned()))
    })
}

impl Journal {
    /// Opens `DIR/journal.db`, creating the directory (`0700` on Unix) and the journal (`0600`) if missing.
    ///
    /// Refuses a database written with a newer schema ([`JournalError::NewerSchema`]) and a damaged one
    /// ([`JournalError::Corrupt`]: an emptied 0-byte file, a file that is not SQLite, a missing table).
    pub fn open(dir: &Path) -> Result<Journal, JournalError> {
        let conn = schema::open(dir)?;
        Ok(Journal {
            conn: Mutex::new(conn),
            path: dir.join(DB_FILE),
            approval_key: std::sync::OnceLock::new(),
        })
    }

    /// Takes the apply lock of `dir` (`DIR/apply.lock`) without waiting: a second holder, in this process
    /// or another, is refused with [`JournalError::Locked`] naming the holder's pid. Released when the
    /// [`ApplyLock`] drops or the process dies.
    pub fn lock(dir: &Path) -> Result<ApplyLock, JournalError> {
        ApplyLock::acquire(dir)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores a plan under its hash. Saving the same hash again with the same target and JSON does nothing;
    /// with a different one it is refused ([`JournalError::PlanConflict`]). `plan_json` must already have
    /// its secret values replaced by digests.
    pub fn save_plan(&self, hash: &str, target: &str, plan_json: &str) -> Result<(), JournalError> {
        self.write("saving a plan", |tx| {
            let stored: Option<(String, String)> = tx
                .query_row(
                    "SELECT target, plan_json FROM plans WHERE hash = ?1",
                    [hash],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            match stored {
                Some((t, j)) if t == target && j == plan_json => Ok(Ok(())),
                Some(_) => Ok(Err(JournalError::PlanConflict(hash.to_owned()))),
                None => {
                    tx.execute(
                        "INSERT INTO plans (hash, target, plan_json, created_at) \
                         VALUES (?1, ?2, ?3, ?4)",
                        params![hash, target, plan_json, now_rfc3339()],
                    )?;
                    Ok(Ok(()))
                }
            }
        })
    }

    /// The plan JSON stored under `hash`; `None` for a hash that was never saved.
    pub fn load_plan(&self, hash: &str) -> Result<Option<String>, JournalError> {
        self.conn()
            .query_row("SELECT plan_json FROM plans WHERE hash = ?1", [hash], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql("loading a plan"))
    }

    /// Begins a release of the saved plan `plan_hash`: the release (`running`, numbered one above the
    /// newest) and one `pending` row per step (index = position in `steps`), in one transaction.
    ///
    /// Refused when the plan was never saved ([`JournalError::UnknownPlan`]) or another release is still
    /// `running` ([`JournalError::ReleaseRunning`]: resume it, or finish it as `superseded` first).
    pub fn begin_release(
        &self,
        plan_hash: &str,
        kind: ReleaseKind,
        steps: &[PlannedStep],
    ) -> Result<ReleaseId, JournalError> {
        self.write("beginning a release", |tx| {
            if let Err(e) = plan_stored(tx, plan_hash)? {
                return Ok(Err(e));
            }
            let running: Option<u64> = tx
                .query_row(
                    "SELECT number FROM releases WHERE state = 'running' ORDER BY number DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(number) = running {
                return Ok(Err(JournalError::ReleaseRunning(ReleaseId(number))));
            }
            let number: u64 =
                tx.query_row("SELECT COALESCE(MAX(number), 0) + 1 FROM releases", [], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO releases (number, plan_hash, kind, state, started_at) \
                 VALUES (?1, ?2, ?3, 'running', ?4)",
                params![number, plan_hash, kind, now_rfc3339()],
            )?;
            let mut insert = tx.prepare(
                "INSERT INTO steps (release, idx, kind, namespace, name, action, level, desired_digest, \
                 state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending')",
            )?;
            for (index, step) in steps.iter().enumerate() {
                insert.execute(params![
                    number,
                    index as u64,
                    step.object.kind,
                    step.object.namespace,
                    step.object.name,
                    step.action,
                    step.level,
                    step.desired_digest,
                ])?;
            }
            Ok(Ok(ReleaseId(number)))
        })
    }

    /// Marks a step `started`; call it, and let it return, before the step's cluster write.
    ///
    /// The step must be `pending`, or `started`/`failed` (a resume running it again); the release must be
    /// `running`.
    pub fn step_started(&self, release: ReleaseId, index: u32) -> Result<(), JournalError> {
        self.write("recording a step start", |tx| {
            let from = match running_step(tx, release, index)? {
                Ok(from) => from,
                Err(e) => return Ok(Err(e)),
            };
            if from == StepState::Done {
                let to = StepState::Started;
                return Ok(Err(JournalError::StepTransition {
                    release,
                    index,
                    from,
                    to,
                }));
            }
            tx.execute(
                "UPDATE steps SET state = 'started', started_at = ?3, finished_at = NULL, \
                 detail = NULL, uid = NULL, resource_version = NULL, digest = NULL \
                 WHERE release = ?1 AND idx = ?2",
                params![release.0, index, now_rfc3339()],
            )?;
            Ok(Ok(()))
        })
    }

    /// Records how a `started` step ended: `done` when `outcome.ok`, else `failed`, with the detail text and
    /// the object's resulting uid, resourceVersion and digest. The release must be `running`.
    pub fn step_finished(
        &self,
        release: ReleaseId,
        index: u32,
        outcome: &StepOutcome,
    ) -> Result<(), JournalError> {
        self.write("recording a step outcome", |tx| {
            let from = match running_step(tx, release, index)? {
                Ok(from) => from,
                Err(e) => return Ok(Err(e)),
            };
            let to = if outcome.ok { StepState::Done } else { StepState::Failed };
            if from != StepState::Started {
                return Ok(Err(JournalError::StepTransition { release, index, from, to }));
            }
            tx.execute(
                "UPDATE steps SET state = ?3, detail = ?4, uid = ?5, resource_version = ?6, digest = ?7, \
                 finished_at = ?8 WHERE release = ?1 AND idx = ?2",
                params![
                    release.0,
                    index,
                    to,
                    outcome.detail,
                    outcome.uid,
                    outcome.resource_version,
                    outcome.digest,
                    now_rfc3339(),
                ],
            )?;
            Ok(Ok(()))
        })
    }

    /// Moves a release to `state` (see [`ReleaseState`] for the allowed moves; the same state again is a
    /// no-op). `succeeded` needs every step `done`. Leaving `running` sets `finished_at`; going back to
    /// `running` (a resume) clears it.
    pub fn finish_release(
        &self,
        release: ReleaseId,
        state: ReleaseState,
    ) -> Result<(), JournalError> {
        use ReleaseState::{Running, Succeeded, Superseded};
        self.write("recording a release state", |tx| {
            let Some(from) = release_state(tx, release)? else {
                return Ok(Err(JournalError::UnknownRelease(release)));
            };
            if from == state {
                return Ok(Ok(()));
            }
            if matches!(from, Succeeded | Superseded) {
                return Ok(Err(JournalError::ReleaseTransition {
                    release,
                    from,
                    to: state,
                }));
            }
            if state == Succeeded {
                let unfinished: usize = tx.query_row(
                    "SELECT COUNT(*) FROM steps WHERE release = ?1 AND state <> 'done'",
                    [release.0],
                    |r| r.get(0),
                )?;
                if unfinished > 0 {
                    return Ok(Err(JournalError::StepsNotDone {
                        release,
                        unfinished,
                    }));
                }
            }
            let finished_at = (state != Running).then(now_rfc3339);
            tx.execute(
                "UPDATE releases SET state = ?2, finished_at = ?3 WHERE number = ?1",
                params![release.0, state, finished_at],
            )?;
            Ok(Ok(()))
        })
    }

    /// One release; `None` if there is no such release.
    pub fn release(&self, id: ReleaseId) -> Result<Option<Release>, JournalError> {
        self.one_release("WHERE number = ?1", id.0)
    }

    /// Every release, newest first.
    pub fn releases(&self) -> Result<Vec<Release>, JournalError> {
        let conn = self.conn();
        let query = format!("SELECT {RELEASE_COLUMNS} FROM releases ORDER BY number DESC");
        let mut stmt = conn.prepare(&query).map_err(sql("listing releases"))?;
        let rows = stmt
            .query_map([], read_release)
            .map_err(sql("listing releases"))?;
        rows.collect::<Result<_, _>>()
            .map_err(sql("listing releases"))
    }

    /// The steps of a release, in index order ([`JournalError::UnknownRelease`] if there is no such release).
    pub fn steps(&self, id: ReleaseId) -> Result<Vec<Step>, JournalError> {
        let conn = self.conn();
        let action = "listing steps";
        let exists: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM releases WHERE number = ?1)",
                [id.0],
                |r| r.get(0),
            )
            .map_err(sql(action))?;
        if !exists {
            return Err(JournalError::UnknownRelease(id));
        }
        let query = format!("SELECT {STEP_COLUMNS} FROM steps WHERE release = ?1 ORDER BY idx");
        let mut stmt = conn.prepare(&query).map_err(sql(action))?;
        let rows = stmt.query_map([id.0], read_step).map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }

    /// The hashes of the stored plans that start with `prefix` (lowercase hex), at most `limit`.
    pub fn plan_hashes_starting_with(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<String>, JournalError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT hash FROM plans WHERE substr(hash, 1, ?1) = ?2 ORDER BY hash LIMIT ?3")
            .map_err(sql("finding a plan by prefix"))?;
        let rows = stmt
            .query_map(params![prefix.len(), prefix, limit], |r| r.get(0))
            .map_err(sql("finding a plan by prefix"))?;
        rows.collect::<Result<_, _>>()
            .map_err(sql("finding a plan by prefix"))
    }

    /// The number the next [`Journal::begin_release`] will give (one above the newest release).
    pub fn next_release_number(&self) -> Result<u64, JournalError> {
        self.conn()
            .query_row(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM releases",
                [],
                |r| r.get(0),
            )
            .map_err(sql("numbering a release"))
    }

    /// The release a `resume` continues: the `running` one, if any (there is at most one).
    pub fn unfinished(&self) -> Result<Option<Release>, JournalError> {
        self.one_release(
            "WHERE state = ?1 ORDER BY number DESC LIMIT 1",
            ReleaseState::Running,
        )
    }

    /// The newest `succeeded` release (of either kind): what is live, as far as this journal knows.
    pub fn last_succeeded(&self) -> Result<Option<Release>, JournalError> {
        self.one_release(
            "WHERE state = ?1 ORDER BY number DESC LIMIT 1",
            ReleaseState::Succeeded,
        )
    }

    /// Asks the running apply (in any process) to halt before its next step. Stays set until
    /// [`Journal::clear_stop`].
    pub fn request_stop(&self) -> Result<(), JournalError> {
        self.write("requesting a stop", |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO control (key, value) VALUES (?1, ?2)",
                params![STOP_KEY, now_rfc3339()],
            )?;
            Ok(Ok(()))
        })
    }

    /// Whether a stop was requested and not yet cleared; the engine checks it between steps.
    pub fn stop_requested(&self) -> Result<bool, JournalError> {
        self.conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM control WHERE key = ?1)",
                [STOP_KEY],
                |r| r.get(0),
            )
            .map_err(sql("reading the stop request"))
    }

    /// Withdraws a stop request (the engine calls it once it has stopped, and when a new run begins).
    pub fn clear_stop(&self) -> Result<(), JournalError> {
        self.write("clearing the stop request", |tx| {
            tx.execute("DELETE FROM control WHERE key = ?1", [STOP_KEY])?;
            Ok(Ok(()))
        })
    }

    /// The connection, even if a panic on another thread poisoned the lock: a panic mid-transaction drops
    /// the transaction, which rolls it back, so the connection is always consistent.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `body` in one immediate (write-locked) transaction, committed only when it returns `Ok(Ok(_))`.
    /// The outer `Result` carries SQLite errors (wrapped with `action`), the inner one refusals.
    fn write<T>(
        &self,
        action: &'static str,
        body: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<Result<T, JournalError>>,
    ) -> Result<T, JournalError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql(action))?;
        let value = body(&tx).map_err(sql(action))??;
        tx.commit().map_err(sql(action))?;
        fault::after_commit();
        Ok(value)
    }

    /// The first release matching `filter` (a `WHERE …` clause with one parameter).
    fn one_release(
        &self,
        filter: &str,
        param: impl rusqlite::ToSql,
    ) -> Result<Option<Release>, JournalError> {
        let query = format!("SELECT {RELEASE_COLUMNS} FROM releases {filter}");
        self.conn()
            .query_row(&query, [param], read_release)
            .optional()
            .map_err(sql("reading a release"))
    }
}
