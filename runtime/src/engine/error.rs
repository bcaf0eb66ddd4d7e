//! The engine's errors, each with its fixed code, a fix, and the exit code class.

pub use super::error_reasons::{Drift, ExternalChange, Staleness};
use crate::identity::ObjectKey;
use piceli_core::{Code, Coded};

/// The underlying error of a cluster or kubeconfig failure, kept as the error's `source()`.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What can go wrong while planning or applying.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Rendering or run-time validation failed.
    #[error(transparent)]
    Render(#[from] crate::Error),
    /// The kubeconfig file cannot be read or parsed.
    #[error("cannot read kubeconfig `{path}`: {reason}")]
    Kubeconfig {
        /// The file.
        path: String,
        /// Why.
        reason: String,
        /// The error itself, for callers that inspect it (`kube::Error`, …); its words are in `reason`.
        #[source]
        source: Cause,
    },
    /// The kubeconfig has no such context.
    #[error("kubeconfig `{path}` has no context `{context}`")]
    Context {
        /// The file.
        path: String,
        /// The context asked for.
        context: String,
    },
    /// The API server refused or could not be reached.
    #[error("{what}: {reason}")]
    Cluster {
        /// What was being done.
        what: String,
        /// The server's words.
        reason: String,
        /// The error itself, for callers that inspect it (`kube::Error`, …); its words are in `reason`.
        #[source]
        source: Cause,
    },
    /// The cluster does not serve this kind.
    #[error("the cluster does not serve {api_version} {kind}")]
    UnknownKind {
        /// apiVersion.
        api_version: String,
        /// kind.
        kind: String,
    },
    /// A `resource` item's kind is not served by the cluster and the app does not install its CRD.
    #[error(
        "the cluster does not serve {api_version} {kind} (CRD {crd}), which `{item}` needs; nothing was applied"
    )]
    CrdNotServed {
        /// `resource gateway.networking.k8s.io/v1/HTTPRoute web`.
        item: String,
        /// apiVersion.
        api_version: String,
        /// kind.
        kind: String,
        /// The CRD's name (`httproutes.gateway.networking.k8s.io`).
        crd: String,
    },
    /// An object exists and is not ours.
    #[error("{kind}/{name} exists and is not managed by this app")]
    NotOwned {
        /// Kind.
        kind: String,
        /// Name.
        name: String,
    },
    /// `--forget-helm-release NAME` names a release that claims nothing in the namespace.
    #[error(
        "Helm release {release} claims no object of the app and has no release Secret in namespace {namespace}"
    )]
    HelmReleaseNotFound {
        /// The release named.
        release: String,
        /// The target namespace.
        namespace: String,
    },
    /// A Job of the app whose immutable fields change is still running: replacing it would kill its pods.
    #[error("Job/{namespace}/{name} is still running and its {} cannot change in place (replacing it would delete the running Job and its pods)", fields.join(", "))]
    JobRunning {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The immutable fields that change (`spec.template`, …).
        fields: Vec<String>,
    },
    /// An object of a kind that holds data (a PersistentVolumeClaim, a Namespace, …) whose immutable fields
    /// change: it is never deleted to be replaced.
    #[error("{kind}/{name} cannot change {} in place, and Piceli never replaces a {kind}: {lost}", fields.join(", "))]
    ImmutableData {
        /// Its kind.
        kind: String,
        /// `namespace/name` or `name`.
        name: String,
        /// The immutable fields that change (`spec.storageClassName`, …).
        fields: Vec<String>,
        /// What deleting it would lose, in words.
        lost: String,
    },
    /// A CustomResourceDefinition change that would strand objects stored in a version it drops.
    #[error("CustomResourceDefinition/{name} {problem}")]
    CrdVersion {
        /// The CRD's name.
        name: String,
        /// What the change does.
        problem: super::crd_versions::CrdVersionProblem,
    },
    /// A secret source is missing.
    #[error("secret `{secret}` key `{key}`: {reason}")]
    SecretSource {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// What is missing (never the value).
        reason: String,
    },
    /// `--rotate` names no generated value of the app.
    #[error("--rotate {asked}: {reason}")]
    RotateUnknown {
        /// What was asked (`SECRET` or `SECRET.KEY`).
        asked: String,
        /// Why it names nothing to rotate, with what there is.
        reason: String,
    },
    /// No plan stored under this hash.
    #[error("no plan with hash `{0}` was made in this state directory")]
    UnknownPlan(String),
    /// An object the plan acts on is not as the plan saw it.
    #[error("{object} {drift}; nothing was written")]
    Precondition {
        /// The object.
        object: ObjectKey,
        /// How it differs.
        drift: Drift,
    },
    /// The plan was made against another API server.
    #[error("the plan was made against {planned}, this is {actual}")]
    OtherServer {
        /// The server the plan was made against.
        planned: String,
        /// The server this apply talks to.
        actual: String,
    },
    /// The app changed since the plan.
    #[error("{}", reason.describe(object))]
    Stale {
        /// The object.
        object: ObjectKey,
        /// What no longer matches.
        reason: Staleness,
    },
    /// An `external` object appeared, disappeared or was replaced since the plan.
    #[error("{object} (external) {change} since the plan; nothing was written")]
    ExternalChanged {
        /// The `external` object.
        object: ObjectKey,
        /// How it changed.
        change: ExternalChange,
    },
    /// The server rejected a write.
    #[error("{object}: {reason}")]
    Apply {
        /// The object written.
        object: ObjectKey,
        /// The server's words.
        reason: String,
    },
    /// The journal failed (a damaged journal and a held lock have codes of their own).
    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),
    /// The state directory could not be written (outside the journal: the plan file, the digest key).
    #[error("{0}")]
    StateDir(String),
    /// Applied, but an object did not become ready (timed out, or failed).
    #[error("{object}{}: {why}", match waited { Some(s) => format!(" not ready after {s}s"), None => String::new() })]
    NotReady {
        /// The object.
        object: ObjectKey,
        /// `Some(seconds)` when it was still waiting at the deadline; `None` when it failed.
        waited: Option<u64>,
        /// Its own words for why (a condition's message, a pod's reason).
        why: String,
    },
    /// `deploy --approve HASH` named a hash other than the plan `deploy` just made.
    #[error("the plan is `{planned}`, not the approved `{approved}`: {}", if *stale { "that is an older plan (stale): the app or the cluster changed since that hash was printed" } else { "no plan with that hash was made in this state directory (unknown hash)" })]
    ApprovalMismatch {
        /// The hash of the plan just made.
        planned: String,
        /// The hash given with `--approve`.
        approved: String,
        /// Whether `approved` names an older stored plan (else it is unknown here).
        stale: bool,
    },
    /// A check failed and the automatic rollback could not be planned or applied.
    #[error("{0}")]
    RollbackFailed(String),
    /// A stored plan's content does not hash to the hash that was approved (or that the cluster records).
    #[error("the stored plan `{hash}` {reason}; nothing was written")]
    PlanTampered {
        /// The approved hash.
        hash: String,
        /// What does not match.
        reason: String,
    },
    /// A release or a deploy run names a plan no recorded approval covers (see the journal's approvals).
    #[error("{what} carries out plan `{hash}`, which no recorded approval covers{}; nothing was written or pushed", if run.is_some() { " for this run" } else { "" })]
    NotApproved {
        /// `deploy run 3`, `release 2`, …
        what: String,
        /// The plan's hash.
        hash: String,
        /// The deploy run the approval must be bound to, if any.
        run: Option<u64>,
    },
    /// The journal's approval of the plan is not sealed by this user's approval key (edited, planted,
    /// sealed with another key, or older than seals).
    #[error("{what} carries out plan `{hash}`, but {reason}; nothing was written or pushed")]
    ApprovalUnsealed {
        /// `deploy run 3`, `release 2`, …
        what: String,
        /// The plan's hash.
        hash: String,
        /// Why the seal is not trusted.
        reason: String,
    },
    /// The plan was made for another target or namespace than this command's.
    #[error(
        "the plan was made for target `{planned_target}`, namespace `{planned_namespace}`; this command runs for target `{target}`, namespace `{namespace}`; nothing was written"
    )]
    WrongTarget {
        /// The plan's target.
        planned_target: String,
        /// The plan's namespace.
        planned_namespace: String,
        /// This command's target.
        target: String,
        /// This command's namespace.
        namespace: String,
    },
    /// Another apply holds the cluster lock.
    #[error("Lease/{lease} is held by `{holder}`{}: another apply is running against this target; nothing was written", if since.is_empty() { String::new() } else { format!(" since {since}") })]
    ClusterLocked {
        /// `namespace/name` of the Lease.
        lease: String,
        /// Its holder.
        holder: String,
        /// Since when.
        since: String,
    },
    /// Writes kept failing for a reason that may pass; the release stays resumable.
    #[error("{0}; the release stays running: `resume` continues it")]
    Interrupted(String),
    /// `stop` halted the run between levels; the release stays running.
    #[error("{0}")]
    Stopped(String),
    /// `--approve` is not a hash nor a long enough prefix of one.
    #[error("`{0}` is not a plan hash (64 hex digits, or a prefix of at least 12)")]
    BadHash(String),
    /// A hash prefix matches several stored plans.
    #[error("`{prefix}` is the start of {} stored plans: {}", matches.len(), matches.join(", "))]
    AmbiguousHash {
        /// The prefix given.
        prefix: String,
        /// The plans it matches.
        matches: Vec<String>,
    },
    /// Fields the app sets are owned by other field managers (every one of the plan's, listed).
    #[error("{} field(s) the app sets are owned by another field manager: {}", .0.len(), .0.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("; "))]
    FieldConflicts(Vec<super::conflicts::FieldConflict>),
    /// A release is still running.
    #[error(
        "release {0} is still running (interrupted); finish it with `resume` or end it with `resume --abandon`"
    )]
    ReleaseRunning(u64),
    /// Test-only (`fault-injection` feature): the fault hook stopped the run here, as a kill would.
    #[cfg(feature = "fault-injection")]
    #[error("killed by the fault hook at {0}")]
    Killed(String),
    /// A name from the command line (`--namespace`) is not a valid Kubernetes name.
    #[error("`--{flag}`: {message}")]
    InvalidName {
        /// The flag.
        flag: &'static str,
        /// What is wrong with it.
        message: String,
        /// How to fix it.
        help: String,
    },
    /// `rollback N` / `diff N` name a release the journal does not have (or no earlier one exists).
    #[error("{0}")]
    UnknownRelease(String),
    /// `plan`'s server-side-apply dry run was refused (invalid object, a field owned by another manager).
    #[error("{0}")]
    DryRun(String),
    /// The TLS handshake with the API server failed (a certificate signed by another CA, …).
    #[error("{what}: TLS handshake failed, the server's certificate was not accepted: {reason}")]
    Tls {
        /// What was being done.
        what: String,
        /// The causes, outermost first.
        reason: String,
        /// The error itself, for callers that inspect it (`kube::Error`, …); its words are in `reason`.
        #[source]
        source: Cause,
    },
    /// Nothing accepted the connection at the API server's address.
    #[error("{what}: cannot connect to the API server: {reason}")]
    Unreachable {
        /// What was being done.
        what: String,
        /// The causes, outermost first.
        reason: String,
        /// The error itself, for callers that inspect it (`kube::Error`, …); its words are in `reason`.
        #[source]
        source: Cause,
    },
    /// An `--env-file` cannot be read or has a line that is not `KEY=VALUE`.
    #[error("{}", match line { Some(l) => format!("{path}:{l}: {reason}"), None => format!("cannot read env file `{path}`: {reason}") })]
    EnvFile {
        /// The file.
        path: String,
        /// The line (1-based), when a line is wrong.
        line: Option<usize>,
        /// What is wrong (never a value).
        reason: String,
    },
    /// Building or delivering an image built from the workspace failed.
    #[error(transparent)]
    Images(#[from] crate::images::ImagesError),
    /// The API server answered 401.
    #[error("{what}: the API server rejected the credentials: {reason}")]
    Unauthorized {
        /// What was being done.
        what: String,
        /// The server's words.
        reason: String,
        /// The error itself, for callers that inspect it (`kube::Error`, …); its words are in `reason`.
        #[source]
        source: Cause,
    },
}

impl Coded for EngineError {
    fn code(&self) -> Code {
        match self {
            EngineError::Render(e) => e.code(),
            EngineError::Kubeconfig { .. } => Code::KubeconfigUnreadable,
            EngineError::Context { .. } => Code::ContextMissing,
            EngineError::Cluster { .. } => Code::ClusterError,
            EngineError::UnknownKind { .. } => Code::UnknownKind,
            EngineError::CrdNotServed { .. } => Code::CrdNotServed,
            EngineError::NotOwned { .. } => Code::NotOwned,
            EngineError::JobRunning { .. } => Code::JobRunning,
            EngineError::ImmutableData { .. } => Code::ImmutableData,
            EngineError::CrdVersion { .. } => Code::CrdVersionStranded,
            EngineError::HelmReleaseNotFound { .. } => Code::HelmReleaseNotFound,
            EngineError::SecretSource { .. } => Code::SecretSourceMissing,
            EngineError::RotateUnknown { .. } => Code::RotateUnknown,
            EngineError::UnknownPlan(_) => Code::UnknownPlan,
            EngineError::Precondition { .. } | EngineError::OtherServer { .. } => {
                Code::PreconditionFailed
            }
            EngineError::Stale { .. } => Code::PlanStale,
            EngineError::ExternalChanged { .. } => Code::ExternalChanged,
            EngineError::Apply { .. } => Code::ApplyFailed,
            EngineError::Journal(e) => e.code(),
            EngineError::StateDir(_) => Code::JournalFailed,
            #[cfg(feature = "fault-injection")]
            EngineError::Killed(_) => Code::ApplyFailed,
            EngineError::NotReady { .. } => Code::NotReady,
            EngineError::ApprovalMismatch { .. } => Code::DeployApprovalMismatch,
            EngineError::RollbackFailed(_) => Code::RollbackFailed,
            EngineError::PlanTampered { .. } => Code::PlanTampered,
            EngineError::NotApproved { .. } => Code::PlanNotApproved,
            EngineError::ApprovalUnsealed { .. } => Code::ApprovalUnsealed,
            EngineError::WrongTarget { .. } => Code::WrongTarget,
            EngineError::ClusterLocked { .. } => Code::ClusterLocked,
            EngineError::Interrupted(_) => Code::ApplyInterrupted,
            EngineError::ReleaseRunning(_) => Code::ReleaseRunning,
            EngineError::Stopped(_) => Code::ApplyFailed,
            EngineError::BadHash(_) => Code::BadHash,
            EngineError::FieldConflicts(_) => Code::FieldConflicts,
            EngineError::AmbiguousHash { .. } => Code::AmbiguousHash,
            EngineError::InvalidName { .. } => Code::InvalidNameFlag,
            EngineError::UnknownRelease(_) => Code::UnknownRelease,
            EngineError::DryRun(_) => Code::DryRunRejected,
            EngineError::Tls { .. } => Code::TlsFailed,
            EngineError::Unreachable { .. } => Code::ClusterUnreachable,
            EngineError::Unauthorized { .. } => Code::Unauthorized,
            EngineError::EnvFile { .. } => Code::EnvFileInvalid,
            EngineError::Images(e) => e.code(),
        }
    }

    fn help(&self) -> String {
        match self {
            EngineError::Render(e) => e.help(),
            EngineError::Kubeconfig { .. } => {
                "pass `--kubeconfig PATH` or fix the target's path; for the local target run `piceli sim start --dir .piceli/local`".into()
            }
            EngineError::Context { .. } => "pass `--context NAME` with a context the kubeconfig defines".into(),
            EngineError::CrdNotServed { crd, .. } => format!(
                "install the CRD {crd} (its project's release, e.g. `kubectl apply --server-side -f` its CRD files), or let the app apply it first: `crds \"DIR\" {{ install: true }}`"
            ),
            EngineError::NotOwned { kind, name } => {
                format!("to take it over, plan with `--adopt {kind}/{name}` (or `--adopt-all`) and approve that plan")
            }
            EngineError::HelmReleaseNotFound { namespace, .. } => format!(
                "name a release that installed the app's objects in {namespace} (their `meta.helm.sh/release-name` annotation; `helm list -n {namespace}`), or leave `--forget-helm-release` out"
            ),
            EngineError::ImmutableData { kind, .. } => format!(
                "nothing was planned. Keep the live value in `app!` (write the {kind}'s live fields as `kubectl get -o yaml` shows them), or give the item a new name to create a new {kind} beside the old one (copy the data yourself); deleting the old one by hand, when its data may go, also lets the plan create it anew"
            ),
            EngineError::CrdVersion { problem, .. } => match problem {
                super::crd_versions::CrdVersionProblem::DropsStoredVersions(versions) => format!(
                    "nothing was planned. Keep {} in the CRD's versions (`served: false` is allowed) until its objects are migrated to the storage version (read and write each one) and a status update removed {} from `status.storedVersions`; then drop it",
                    versions.join(", "),
                    if versions.len() == 1 { "it" } else { "them" }
                ),
                _ => "nothing was planned. Mark exactly one version `storage: true`: the new version, with the old one kept beside it while objects are stored in it".into(),
            },
            EngineError::JobRunning { namespace, name, .. } => format!(
                "wait until the Job has finished (`kubectl -n {namespace} wait --for=condition=complete job/{name}`), then run `plan` again; or, if stopping it now is safe, delete it (`kubectl -n {namespace} delete job {name} --cascade=foreground`) and plan again"
            ),
            EngineError::ApprovalMismatch { planned, .. } => format!(
                "review the changes with `deploy` (or `plan`), then run `deploy --approve {planned}`"
            ),
            EngineError::UnknownPlan(_)
            | EngineError::Precondition { .. }
            | EngineError::OtherServer { .. }
            | EngineError::ExternalChanged { .. } => {
                "run `plan` again and approve the hash it prints".into()
            }
            EngineError::Stale { .. } => "run `plan` again and approve the hash it prints; if this stops a `resume`, end that release with `resume --abandon` first".into(),
            EngineError::ApprovalUnsealed { hash, .. } => {
                let short = &hash[..hash.len().min(12)];
                format!(
                    "review the plan (`plan`, `diff`), then approve it yourself: `deploy --approve {short}` (a new run) or `apply --approve {short}`; `resume --abandon` ends a running release first. Where another user or machine approved it, share its key with PICELI_APPROVAL_KEY_FILE"
                )
            }
            EngineError::PlanTampered { .. } => "the state directory was edited after approval: run `plan` again, review, and approve the new hash (`resume --abandon` ends a running release first)".into(),
            EngineError::WrongTarget { planned_target, planned_namespace, .. } => format!(
                "run it with `--target {planned_target} --namespace {planned_namespace}`, or plan again for this target and namespace"
            ),
            EngineError::ClusterLocked { .. } => "wait for the other apply to finish and plan again, or pass `--wait-lock` to wait for it (up to `--timeout` seconds)".into(),
            EngineError::FieldConflicts(_) => "to take them over, plan with `--take-ownership` (every field listed) or `--take-ownership FIELD` (repeatable, e.g. `--take-ownership .spec.replicas` or `Deployment/web:.spec.replicas`) and approve that plan; or set the values in the app to what the other manager set".into(),
            EngineError::BadHash(_) => "copy the hash `plan` printed (a prefix of 12 or more hex digits works)".into(),
            EngineError::AmbiguousHash { .. } => "give more digits of the hash".into(),
            EngineError::Stopped(_) => "run `resume` to continue the release, or `resume --abandon` to end it".into(),
            EngineError::Interrupted(_) => "when the cluster answers again, run `resume` (or `deploy --resume`)".into(),
            EngineError::ReleaseRunning(_) => "run `resume` to finish it, or `resume --abandon` to end it, then plan again".into(),
            EngineError::Journal(e) => e.help(),
            EngineError::InvalidName { help, .. } => help.clone(),
            EngineError::UnknownRelease(_) => {
                "`history` lists the releases; pass one of their numbers".into()
            }
            EngineError::DryRun(message) => dry_run_help(message),
            EngineError::Tls { .. } => {
                "the kubeconfig's certificate-authority does not match this server: get a fresh kubeconfig for the cluster, or pass the right one with `--kubeconfig`".into()
            }
            EngineError::Unreachable { .. } => {
                "is the cluster running? check the kubeconfig's `server:` host and port (the local cluster: `piceli sim start --dir .piceli/local`)".into()
            }
            EngineError::Unauthorized { .. } => {
                "the kubeconfig's token or client certificate is wrong or expired: get fresh credentials for this context".into()
            }
            EngineError::Images(e) => e.help(),
            other => other.code().info().explanation.to_string(),
        }
    }
}

impl EngineError {
    /// A cluster error while doing `what`: a TLS failure, a refused connection and rejected credentials
    /// get codes of their own; every message has the server's words and the causes below them.
    pub fn cluster(
        what: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        super::cluster_error::engine_error(what.into(), Box::new(e))
    }
}

/// PCL0153's help: for a field that cannot change in place, which one and the fixes that apply.
fn dry_run_help(message: &str) -> String {
    // `…: spec.selector: Invalid value: …: field is immutable` (one such clause per field).
    let parts: Vec<&str> = message.split(": Invalid value: ").collect();
    let mut immutable: Vec<&str> = parts
        .windows(2)
        .filter(|w| w[1].contains("field is immutable"))
        .filter_map(|w| w[0].rsplit([' ', '[']).next())
        .filter(|f| !f.is_empty())
        .collect();
    immutable.dedup();
    if message.contains("field is immutable") {
        let fields = if immutable.is_empty() {
            "a field that cannot change in place".to_string()
        } else {
            format!("`{}` cannot change in place", immutable.join("`, `"))
        };
        return format!(
            "nothing was written and no plan was stored: {fields}. Keep the live value in `app!` (a selector: write the live one in `spec: {{ selector: … }}`; `kubectl get -o yaml` shows it), or delete the object and plan again to create it anew"
        );
    }
    "nothing was written and no plan was stored: fix the object in `app!` (an object another tool made: take it over with `--adopt KIND/NAME` or `--adopt-all`), then run `plan` again".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_immutable_field_is_named_with_the_fixes_that_apply() {
        let help = dry_run_help(
            "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}}: field is immutable",
        );
        assert!(
            help.contains("`spec.selector` cannot change in place"),
            "{help}"
        );
        assert!(help.contains("Keep the live value"), "{help}");
        assert!(!help.contains("--adopt"), "{help}");
        let other = dry_run_help("ConfigMap \"x\" is invalid: data: Invalid value: \"\": bad");
        assert!(other.contains("--adopt-all"), "{other}");
    }
}
