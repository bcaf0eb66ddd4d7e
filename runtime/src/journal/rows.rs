//! Reading journal rows into records, and the state checks the write paths share.

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::error::JournalError;
use super::types::{ObjectKey, Release, ReleaseId, ReleaseState, Step, StepState};

/// The columns [`read_release`] reads, in order.
pub(crate) const RELEASE_COLUMNS: &str = "number, plan_hash, kind, state, started_at, finished_at";

/// The columns [`read_step`] reads, in order.
pub(crate) const STEP_COLUMNS: &str = "idx, kind, namespace, name, action, level, desired_digest, \
                                       state, detail, uid, resource_version, digest, started_at, \
                                       finished_at";

/// The state of a release, `None` if there is none.
pub(crate) fn release_state(
    tx: &Transaction<'_>,
    id: ReleaseId,
) -> rusqlite::Result<Option<ReleaseState>> {
    tx.query_row(
        "SELECT state FROM releases WHERE number = ?1",
        [id.0],
        |r| r.get(0),
    )
    .optional()
}

/// The state of a step of a `running` release, or why there is none to change.
pub(crate) fn running_step(
    tx: &Transaction<'_>,
    release: ReleaseId,
    index: u32,
) -> rusqlite::Result<Result<StepState, JournalError>> {
    match release_state(tx, release)? {
        None => return Ok(Err(JournalError::UnknownRelease(release))),
        Some(ReleaseState::Running) => {}
        Some(state) => return Ok(Err(JournalError::ReleaseNotRunning { release, state })),
    }
    let state: Option<StepState> = tx
        .query_row(
            "SELECT state FROM steps WHERE release = ?1 AND idx = ?2",
            params![release.0, index],
            |r| r.get(0),
        )
        .optional()?;
    Ok(state.ok_or(JournalError::UnknownStep { release, index }))
}

/// A [`Release`] from a row of [`RELEASE_COLUMNS`].
pub(crate) fn read_release(row: &Row<'_>) -> rusqlite::Result<Release> {
    let number: u64 = row.get(0)?;
    Ok(Release {
        id: ReleaseId(number),
        number,
        plan_hash: row.get(1)?,
        kind: row.get(2)?,
        state: row.get(3)?,
        started_at: row.get(4)?,
        finished_at: row.get(5)?,
    })
}

/// A [`Step`] from a row of [`STEP_COLUMNS`].
pub(crate) fn read_step(row: &Row<'_>) -> rusqlite::Result<Step> {
    Ok(Step {
        index: row.get(0)?,
        object: ObjectKey {
            kind: row.get(1)?,
            namespace: row.get(2)?,
            name: row.get(3)?,
        },
        action: row.get(4)?,
        level: row.get(5)?,
        desired_digest: row.get(6)?,
        state: row.get(7)?,
        detail: row.get(8)?,
        uid: row.get(9)?,
        resource_version: row.get(10)?,
        digest: row.get(11)?,
        started_at: row.get(12)?,
        finished_at: row.get(13)?,
    })
}
