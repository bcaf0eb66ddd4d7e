//! The last check results `status` weighs: read from the journal's check table (kept by `check` and
//! `deploy`); a journal that cannot be read gives no results.

use crate::journal::Journal;
use serde::Serialize;

/// One check's last result, as `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// The check's name.
    pub name: String,
    /// Its kind (`http`, `exec`, …).
    pub kind: String,
    /// Whether it passed.
    pub passed: bool,
    /// How many attempts it took.
    pub attempts: u32,
    /// What it saw.
    pub message: String,
    /// The release it checked.
    pub release: Option<u64>,
    /// When it finished (RFC 3339).
    pub finished_at: String,
}

/// The last check results of this state directory.
pub fn last_check_results(journal: &Journal) -> Vec<CheckSummary> {
    journal
        .last_check_results()
        .unwrap_or_default()
        .into_iter()
        .map(|r| CheckSummary {
            name: r.name,
            kind: r.kind,
            passed: r.passed,
            attempts: r.attempts,
            message: r.message,
            release: r.release,
            finished_at: r.finished_at,
        })
        .collect()
}
