//! The journal's records: releases, steps, and the states they move through.
//!
//! Every state is stored as its lowercase name (`pending`, `running`, …) so the database reads well in the
//! `sqlite3` shell. None of these records holds a secret value: only object identity, actions, digests and
//! the detail text the engine gives (which must already be free of secrets).

use std::fmt;

pub use crate::identity::ObjectKey;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use super::error::JournalError;

/// Identifies a release. It is the release's number (1, 2, 3, … in the order releases began), so
/// `rollback 3` and `ReleaseId(3)` name the same release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseId(pub u64);

impl fmt::Display for ReleaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Declares a state enum stored as lowercase text, with `as_str`, `parse`, `Display` and SQL conversions.
macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The lowercase name stored in the journal.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The value stored as `text`.
            pub(crate) fn parse(text: &str) -> Result<$name, JournalError> {
                match text {
                    $($text => Ok($name::$variant),)*
                    other => Err(JournalError::Corrupt(format!(
                        "`{other}` is not a {}",
                        stringify!($name)
                    ))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<$name> {
                $name::parse(value.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

stored_enum! {
    /// How a plan came to be carried out (see [`Journal::record_approval`](super::Journal::record_approval)).
    ApprovalKind {
        /// `--approve HASH` named it.
        Approved = "approved",
        /// It changes nothing and pushes nothing (a deploy run needs no approval for it).
        Unchanged = "unchanged",
        /// The automatic rollback of a release whose checks failed.
        Rollback = "rollback",
        /// Recorded by the schema migration for a plan an earlier release applied.
        Migrated = "migrated",
    }
}

stored_enum! {
    /// Why a release was made.
    ReleaseKind {
        /// An approved plan applied with `apply` or `deploy`.
        Apply = "apply",
        /// A plan that restores an earlier release's objects.
        Rollback = "rollback",
    }
}

stored_enum! {
    /// Where a release is.
    ///
    /// Allowed moves (anything else is [`JournalError::ReleaseTransition`]; setting the current state again
    /// is a no-op): `running`, `stopped` and `failed` may go to any state (`stopped`/`failed` → `running` is a
    /// resume); `succeeded` and `superseded` are final, so the succeeded releases stay the rollback points.
    ReleaseState {
        /// Steps are being applied, or the process died while they were: `resume` continues it.
        Running = "running",
        /// Every step is done.
        Succeeded = "succeeded",
        /// A step failed and the release halted.
        Failed = "failed",
        /// `stop` halted it between steps.
        Stopped = "stopped",
        /// It never finished, and a later plan replaced it (set before beginning that plan's release).
        Superseded = "superseded",
    }
}

stored_enum! {
    /// Where one step is. `pending` → `started` (written before the cluster write) → `done` or `failed`.
    ///
    /// A `started` or `failed` step may be started again (a resume re-runs it after reading the object
    /// back); a `done` step never changes again.
    StepState {
        /// Not run yet.
        Pending = "pending",
        /// Its cluster write may or may not have landed: read the object back before deciding.
        Started = "started",
        /// The write landed and the object is as desired.
        Done = "done",
        /// The write, or its readiness wait, failed.
        Failed = "failed",
    }
}

/// One step of a plan, as given to [`Journal::begin_release`](super::Journal::begin_release). Its index is
/// its position in the slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStep {
    /// The object (`Deployment/shop/web`; no namespace for cluster-scoped objects).
    pub object: ObjectKey,
    /// What the step does (`create`, `update`, `delete`, `adopt`, …).
    pub action: String,
    /// The dependency level: steps of one level may run in parallel, lower levels first.
    pub level: u32,
    /// The digest of the desired object (secret values only ever enter it as keyed digests).
    pub desired_digest: Option<String>,
}

/// How a step ended, as given to [`Journal::step_finished`](super::Journal::step_finished).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepOutcome {
    /// `true` moves the step to `done`, `false` to `failed`.
    pub ok: bool,
    /// What happened, for `history` and errors. Must not contain secret values.
    pub detail: String,
    /// The object's UID after the write.
    pub uid: Option<String>,
    /// The object's resourceVersion after the write.
    pub resource_version: Option<String>,
    /// The digest of the object as the cluster now holds it.
    pub digest: Option<String>,
}

/// A release as the journal holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// Its id (equal to `number`).
    pub id: ReleaseId,
    /// Its number: 1 for the first release of the state directory, then 2, 3, …
    pub number: u64,
    /// The hash of the plan it applies.
    pub plan_hash: String,
    /// Why it was made.
    pub kind: ReleaseKind,
    /// Where it is.
    pub state: ReleaseState,
    /// When it began, RFC 3339 in UTC with milliseconds (`2026-11-30T03:42:34.120Z`).
    pub started_at: String,
    /// When it last left `running`; `None` while it runs.
    pub finished_at: Option<String>,
}

/// One step of a release as the journal holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its position in the plan's steps, from 0.
    pub index: u32,
    /// The object (no namespace for cluster-scoped objects).
    pub object: ObjectKey,
    /// What the step does.
    pub action: String,
    /// The dependency level.
    pub level: u32,
    /// The digest of the desired object, as planned.
    pub desired_digest: Option<String>,
    /// Where it is.
    pub state: StepState,
    /// The outcome's detail text, once finished.
    pub detail: Option<String>,
    /// The object's UID after the write.
    pub uid: Option<String>,
    /// The object's resourceVersion after the write.
    pub resource_version: Option<String>,
    /// The digest of the object as the cluster held it after the write.
    pub digest: Option<String>,
    /// When it was last started (RFC 3339 UTC).
    pub started_at: Option<String>,
    /// When it finished (RFC 3339 UTC).
    pub finished_at: Option<String>,
}

stored_enum! {
    /// Where a `deploy` run is: the stage it reached (set when the stage begins).
    DeployStage {
        /// Reading the source identity of each image the app builds (`build(…)`).
        Inputs = "inputs",
        /// Building the images whose inputs changed (into the state directory's build cache).
        Build = "build",
        /// Planning, with the built images' digests in the objects (so the plan's hash covers them).
        Plan = "plan",
        /// Comparing the plan's hash with the approved one (`--approve HASH`).
        Approve = "approve",
        /// Pushing the built images the approved plan runs (or writing the OCI layout).
        Deliver = "deliver",
        /// Applying the approved plan (a release is running).
        Apply = "apply",
        /// Waiting for the applied workloads to be ready.
        Ready = "ready",
        /// Running the declared checks.
        Checks = "checks",
        /// Re-applying the previous succeeded release after a failed check.
        Rollback = "rollback",
        /// Finished.
        Done = "done",
    }
}

stored_enum! {
    /// How a `deploy` run stands.
    DeployState {
        /// Going, or interrupted (a kill, a readiness failure): `deploy --resume` continues it.
        Running = "running",
        /// Applied, ready, every check passed.
        Succeeded = "succeeded",
        /// A check failed (and the rollback, if configured, ran): final.
        Failed = "failed",
        /// A later `deploy` started before this one finished: final.
        Abandoned = "abandoned",
    }
}

/// One `deploy` run as the journal holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployRun {
    /// Its id (1, 2, …).
    pub id: u64,
    /// The approved plan.
    pub plan_hash: String,
    /// The stage it reached.
    pub stage: DeployStage,
    /// How it stands.
    pub state: DeployState,
    /// The release it made (none when the plan changed nothing).
    pub release: Option<u64>,
    /// The rollback release it made after a failed check.
    pub rollback_release: Option<u64>,
    /// What happened last (a failure's text; empty when all went well).
    pub message: String,
    /// When it began (RFC 3339 UTC).
    pub started_at: String,
    /// When it finished; `None` while it runs or is interrupted.
    pub finished_at: Option<String>,
}

/// One image a deploy run builds, as the journal holds it: what the workload runs and what it was built
/// from (see [`Journal::record_deploy_images`](super::Journal::record_deploy_images)).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeployImage {
    /// The image's placeholder in the app (`build:shop-api`).
    pub image: String,
    /// What the workload runs: `HOST[:PORT]/PATH@sha256:<hex>` (`NAME@sha256:<hex>` for an OCI layout).
    pub reference: String,
    /// Where it goes: a registry repository, or `oci:DIR`.
    pub destination: String,
    /// The digest of its inputs (`sha256:<hex>`).
    pub inputs: String,
    /// The workspace's git commit (`None`: not a git checkout).
    pub commit: Option<String>,
    /// Whether the package's files or Cargo.lock differ from the commit.
    pub dirty: bool,
    /// `rustc -V` of the toolchain that built it.
    pub toolchain: String,
    /// Whether it is the last delivered image unchanged (nothing built or pushed).
    pub unchanged: bool,
}

/// One check result to record (see [`Journal::record_check_results`](super::Journal::record_check_results)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRecord {
    /// The check's name.
    pub name: String,
    /// `http`, `exec`, `metric` or `code`.
    pub kind: String,
    /// Whether it passed.
    pub passed: bool,
    /// Attempts made (1 when it passed at once).
    pub attempts: u32,
    /// What the last attempt saw.
    pub message: String,
    /// How long all attempts took, in milliseconds.
    pub duration_ms: u64,
}

/// One journaled check result (what `status` shows).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckResult {
    /// The check's name.
    pub name: String,
    /// `http`, `exec`, `metric` or `code`.
    pub kind: String,
    /// Whether it passed.
    pub passed: bool,
    /// Attempts made.
    pub attempts: u32,
    /// What the last attempt saw.
    pub message: String,
    /// The release the checks ran against (`None`: no release was live).
    pub release: Option<u64>,
    /// When the check finished (RFC 3339 UTC).
    pub finished_at: String,
}
