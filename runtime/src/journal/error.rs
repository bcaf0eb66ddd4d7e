//! What can go wrong in the journal.
//!
//! A damaged journal (PCL0150) and a held lock (PCL0111) have codes of their own; the others are journal
//! failures (PCL0112). Every message names what was being done and, where one exists, the file involved.
//! No message carries data beyond what the journal stores, so none can carry a secret value.

use std::path::PathBuf;

use piceli_core::{Code, Coded};

use super::types::{ReleaseId, ReleaseState, StepState};

/// A journal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file or directory of the state directory could not be created, opened, read or written.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done (`create the state directory`, `open the apply lock`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// SQLite refused an operation (a damaged file, a full disk, a lock held for longer than the busy timeout).
    #[error("journal database error while {action}: {source}")]
    Sqlite {
        /// What was being done (`saving a plan`, `recording a step start`, …).
        action: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The database was written by a newer piceli whose schema this build does not understand.
    #[error(
        "the journal `{}` has schema version {found}, newer than the {supported} this piceli understands; \
         use a newer piceli with this state directory",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version` of the file.
        found: i64,
        /// The newest version this build reads and writes.
        supported: i64,
    },
    /// Another process (or another handle in this one) holds the apply lock of the state directory.
    #[error(
        "another apply is running against this state directory (lock `{}`{})",
        path.display(),
        match pid { Some(pid) => format!(", held by pid {pid}"), None => String::new() }
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// The holder's process id, when it has written it yet.
        pid: Option<u32>,
    },
    /// No plan is stored under this hash.
    #[error("no plan with hash `{0}` is stored in the journal")]
    UnknownPlan(String),
    /// `save_plan` was given a hash that is already stored with a different target or plan.
    #[error("plan `{0}` is already stored with a different target or content")]
    PlanConflict(String),
    /// No release has this id.
    #[error("release {0} is not in the journal")]
    UnknownRelease(ReleaseId),
    /// The release has no step with this index.
    #[error("release {release} has no step {index}")]
    UnknownStep {
        /// The release.
        release: ReleaseId,
        /// The step index asked for.
        index: u32,
    },
    /// `begin_release` while another release is still `running`: finish it (for example as `superseded`) first.
    #[error("release {0} is still running; resume it, or finish it before starting another")]
    ReleaseRunning(ReleaseId),
    /// A step was moved to a state its current state does not lead to (for example `done` → `started`).
    #[error("step {index} of release {release} cannot go from `{from}` to `{to}`")]
    StepTransition {
        /// The release.
        release: ReleaseId,
        /// The step.
        index: u32,
        /// Its current state.
        from: StepState,
        /// The state asked for.
        to: StepState,
    },
    /// A step was recorded for a release that is not `running`.
    #[error("release {release} is `{state}`, so its steps cannot change")]
    ReleaseNotRunning {
        /// The release.
        release: ReleaseId,
        /// Its state.
        state: ReleaseState,
    },
    /// A release was moved to a state its current state does not lead to (for example `succeeded` → `running`).
    #[error("release {release} cannot go from `{from}` to `{to}`")]
    ReleaseTransition {
        /// The release.
        release: ReleaseId,
        /// Its current state.
        from: ReleaseState,
        /// The state asked for.
        to: ReleaseState,
    },
    /// `finish_release(.., Succeeded)` while some steps are not `done`.
    #[error("release {release} cannot succeed: {unfinished} of its steps are not done")]
    StepsNotDone {
        /// The release.
        release: ReleaseId,
        /// How many steps are pending, started or failed.
        unfinished: usize,
    },
    /// The journal is damaged: an emptied (0-byte) file, a file that is not SQLite, a missing table, or a
    /// row holding a value this build does not know (the file was edited by hand or damaged). Never
    /// re-initialized: its history and rollback points would be lost silently.
    #[error("the journal is damaged: {0}")]
    Corrupt(String),
    /// The user's approval key (see `seal.rs`) cannot be found, read or created.
    #[error("the approval key `{}` cannot be used: {detail}", path.display())]
    ApprovalKey {
        /// The key file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

impl Coded for JournalError {
    fn code(&self) -> Code {
        match self {
            JournalError::Corrupt(_) => Code::JournalDamaged,
            JournalError::Locked { .. } => Code::Locked,
            JournalError::UnknownPlan(_) => Code::UnknownPlan,
            JournalError::UnknownRelease(_) => Code::UnknownRelease,
            JournalError::ReleaseRunning(_) => Code::ReleaseRunning,
            JournalError::ApprovalKey { .. } => Code::ApprovalKeyUnusable,
            JournalError::NewerSchema { .. } => Code::JournalNewer,
            JournalError::UnknownStep { .. } => Code::UnknownStep,
            JournalError::Io { .. }
            | JournalError::Sqlite { .. }
            | JournalError::PlanConflict(_)
            | JournalError::StepTransition { .. }
            | JournalError::ReleaseNotRunning { .. }
            | JournalError::ReleaseTransition { .. }
            | JournalError::StepsNotDone { .. } => Code::JournalFailed,
        }
    }

    /// How to fix it, one line, for the `help:` output.
    fn help(&self) -> String {
        let help = match self {
            JournalError::Io { .. } => "check the state directory's permissions and free space",
            JournalError::Sqlite { .. } => {
                "check free space; if the journal is damaged, move the state directory aside"
            }
            JournalError::NewerSchema { .. } => {
                "use the piceli version that wrote this state directory"
            }
            JournalError::Locked { .. } => {
                "wait for the other apply to finish, or stop it with `stop`"
            }
            JournalError::UnknownPlan(_) => "run `plan` and approve the hash it prints",
            JournalError::PlanConflict(_) => "this is a bug in piceli; please report it",
            JournalError::ReleaseRunning(_) => "run `resume` to finish it, or `stop` it",
            JournalError::UnknownRelease(_) | JournalError::UnknownStep { .. } => {
                "list the releases with `history`"
            }
            JournalError::StepTransition { .. }
            | JournalError::ReleaseNotRunning { .. }
            | JournalError::ReleaseTransition { .. }
            | JournalError::StepsNotDone { .. } => "this is a bug in piceli; please report it",
            JournalError::ApprovalKey { .. } => {
                "set PICELI_APPROVAL_KEY_FILE to a private file this user can write (created on first \
                 approval), or fix HOME / XDG_CONFIG_HOME"
            }
            JournalError::Corrupt(_) => {
                "restore the state directory from a backup; or move it aside (its history and rollback \
                 points are lost with it) and run `plan` again"
            }
        };
        help.into()
    }
}

/// Wraps a SQLite error with what was being done.
/// A file that is not SQLite, or a damaged one, is [`JournalError::Corrupt`]; so is a row holding a value
/// its record cannot hold (text in a number column, a negative or too large number, a state this build
/// does not know, text that is not UTF-8): the file was edited by hand, and "check free space" would be
/// the wrong help.
pub(crate) fn sql(action: &'static str) -> impl FnOnce(rusqlite::Error) -> JournalError {
    use rusqlite::Error::{
        FromSqlConversionFailure, IntegralValueOutOfRange, InvalidColumnType, Utf8Error,
    };
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    move |source| match source.sqlite_error_code() {
        Some(NotADatabase | DatabaseCorrupt) => {
            JournalError::Corrupt(format!("{action}: {source}"))
        }
        _ => match &source {
            FromSqlConversionFailure(..)
            | IntegralValueOutOfRange(..)
            | InvalidColumnType(..)
            | Utf8Error(_) => JournalError::Corrupt(format!(
                "{action}: a row holds a value piceli never writes there ({source})"
            )),
            _ => JournalError::Sqlite { action, source },
        },
    }
}
