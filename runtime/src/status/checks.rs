//! The last check results `status` weighs: read from the journal's check table (kept by `check` and
//! `deploy`); a journal that cannot be read gives no results.

use crate::journal::{CheckResult, Journal};

/// The last check results of this state directory.
pub fn last_check_results(journal: &Journal) -> Vec<CheckResult> {
    journal.last_check_results().unwrap_or_default()
}
