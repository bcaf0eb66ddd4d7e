//! The engine's errors, each with its fixed code, a fix, and the exit code class.

use piceli_core::Code;

/// What can go wrong while planning or applying.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Rendering or run-time validation failed.
    #[error(transparent)]
    Render(#[from] crate::Error),
    /// The kubeconfig file cannot be read or parsed.
    #[error("{code}: cannot read kubeconfig `{path}`: {reason}", code = Code::KubeconfigUnreadable)]
    Kubeconfig {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The kubeconfig has no such context.
    #[error("{code}: kubeconfig `{path}` has no context `{context}`", code = Code::ContextMissing)]
    Context {
        /// The file.
        path: String,
        /// The context asked for.
        context: String,
    },
    /// The API server refused or could not be reached.
    #[error("{code}: {what}: {reason}", code = Code::ClusterError)]
    Cluster {
        /// What was being done.
        what: String,
        /// The server's words.
        reason: String,
    },
    /// The cluster does not serve this kind.
    #[error("{code}: the cluster does not serve {api_version} {kind}", code = Code::UnknownKind)]
    UnknownKind {
        /// apiVersion.
        api_version: String,
        /// kind.
        kind: String,
    },
    /// An object exists and is not ours.
    #[error("{code}: {kind}/{name} exists and is not managed by this app", code = Code::NotOwned)]
    NotOwned {
        /// Kind.
        kind: String,
        /// Name.
        name: String,
    },
    /// A secret source is missing.
    #[error("{code}: secret `{secret}` key `{key}`: {reason}", code = Code::SecretSourceMissing)]
    SecretSource {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// What is missing (never the value).
        reason: String,
    },
    /// No plan stored under this hash.
    #[error("{code}: no plan with hash `{0}` was made in this state directory", code = Code::UnknownPlan)]
    UnknownPlan(String),
    /// The cluster changed since the plan.
    #[error("{code}: {0}", code = Code::PreconditionFailed)]
    Precondition(String),
    /// The app changed since the plan.
    #[error("{code}: {0}", code = Code::PlanStale)]
    Stale(String),
    /// A write failed.
    #[error("{code}: {0}", code = Code::ApplyFailed)]
    Apply(String),
    /// Another apply holds the lock.
    #[error("{code}: {0}", code = Code::Locked)]
    Locked(String),
    /// The journal failed.
    #[error("{code}: {0}", code = Code::JournalFailed)]
    Journal(String),
    /// Applied, but an object did not become ready (timed out, or failed).
    #[error("{code}: {0}", code = Code::NotReady)]
    NotReady(String),
    /// `deploy --approve HASH` named a hash other than the plan `deploy` just made.
    #[error("{code}: the plan is `{planned}`, not the approved `{approved}`: the app or the cluster changed since that hash was printed", code = Code::DeployApprovalMismatch)]
    ApprovalMismatch {
        /// The hash of the plan just made.
        planned: String,
        /// The hash given with `--approve`.
        approved: String,
    },
    /// A check failed and the automatic rollback could not be planned or applied.
    #[error("{code}: {0}", code = Code::RollbackFailed)]
    RollbackFailed(String),
    /// Test-only: the fault hook stopped the run here, as a kill would.
    #[error("{code}: killed by the fault hook at {0}", code = Code::ApplyFailed)]
    Killed(String),
}

impl EngineError {
    /// The fixed code.
    pub fn code(&self) -> Code {
        match self {
            EngineError::Render(e) => e.code(),
            EngineError::Kubeconfig { .. } => Code::KubeconfigUnreadable,
            EngineError::Context { .. } => Code::ContextMissing,
            EngineError::Cluster { .. } => Code::ClusterError,
            EngineError::UnknownKind { .. } => Code::UnknownKind,
            EngineError::NotOwned { .. } => Code::NotOwned,
            EngineError::SecretSource { .. } => Code::SecretSourceMissing,
            EngineError::UnknownPlan(_) => Code::UnknownPlan,
            EngineError::Precondition(_) => Code::PreconditionFailed,
            EngineError::Stale(_) => Code::PlanStale,
            EngineError::Apply(_) => Code::ApplyFailed,
            EngineError::Locked(_) => Code::Locked,
            EngineError::Journal(_) => Code::JournalFailed,
            EngineError::Killed(_) => Code::ApplyFailed,
            EngineError::NotReady(_) => Code::NotReady,
            EngineError::ApprovalMismatch { .. } => Code::DeployApprovalMismatch,
            EngineError::RollbackFailed(_) => Code::RollbackFailed,
        }
    }

    /// How to fix it.
    pub fn help(&self) -> String {
        match self {
            EngineError::Render(e) => e.help(),
            EngineError::Kubeconfig { .. } => {
                "pass `--kubeconfig PATH` or fix the target's path; for the local target run `piceli sim start --dir .piceli/local`".into()
            }
            EngineError::Context { .. } => "pass `--context NAME` with a context the kubeconfig defines".into(),
            EngineError::NotOwned { kind, name } => {
                format!("to take it over, plan with `--adopt {kind}/{name}` (or `--adopt-all`) and approve that plan")
            }
            EngineError::ApprovalMismatch { planned, .. } => format!(
                "review the changes with `deploy` (or `plan`), then run `deploy --approve {planned}`"
            ),
            EngineError::UnknownPlan(_) | EngineError::Precondition(_) | EngineError::Stale(_) => {
                "run `plan` again and approve the hash it prints".into()
            }
            other => other.code().info().explanation.to_string(),
        }
    }

    /// Whether the failure is a refusal (exit 2) rather than a run that failed (exit 1).
    pub fn is_rejection(&self) -> bool {
        !matches!(
            self,
            EngineError::Cluster { .. }
                | EngineError::Apply(_)
                | EngineError::Journal(_)
                | EngineError::Killed(_)
                | EngineError::NotReady(_)
                | EngineError::RollbackFailed(_)
        )
    }

    /// A cluster error while doing `what`.
    pub fn cluster(what: impl Into<String>, e: impl std::fmt::Display) -> Self {
        EngineError::Cluster {
            what: what.into(),
            reason: e.to_string(),
        }
    }
}
