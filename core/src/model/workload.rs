//! Workloads (Deployment, StatefulSet, DaemonSet, Job, CronJob) and their containers.

use super::{Block, Labels};
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// The kind of a workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorkloadKind {
    /// apps/v1 Deployment.
    #[default]
    Deployment,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps/v1 DaemonSet.
    DaemonSet,
    /// batch/v1 Job.
    Job,
    /// batch/v1 CronJob.
    CronJob,
}

impl WorkloadKind {
    /// The Kubernetes kind.
    pub fn kind(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Job => "Job",
            WorkloadKind::CronJob => "CronJob",
        }
    }
    /// The DSL keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deployment",
            WorkloadKind::StatefulSet => "stateful_set",
            WorkloadKind::DaemonSet => "daemon_set",
            WorkloadKind::Job => "job",
            WorkloadKind::CronJob => "cron_job",
        }
    }
    /// Whether `replicas` applies (and an autoscaler may target it).
    pub fn scalable(self) -> bool {
        matches!(self, WorkloadKind::Deployment | WorkloadKind::StatefulSet)
    }
    /// Whether its pods run to completion.
    pub fn runs_to_completion(self) -> bool {
        matches!(self, WorkloadKind::Job | WorkloadKind::CronJob)
    }
}

/// A workload and its pod template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name (also the `app.kubernetes.io/component` label of its pods).
    pub name: Name,
    /// Desired replicas (Deployment, StatefulSet).
    pub replicas: Option<Spanned<i64>>,
    /// Containers; a workload written with `image:` at top level has one, named after it.
    pub containers: Vec<Container>,
    /// Init containers.
    pub init_containers: Vec<Container>,
    /// Pod volumes.
    pub volumes: Vec<Volume>,
    /// Labels on the workload object (its pods take `pod_labels`).
    pub labels: Labels,
    /// Annotations on the workload.
    pub annotations: Labels,
    /// The ServiceAccount its pods run as.
    pub service_account: Option<Name>,
    /// CronJob schedule.
    pub schedule: Option<Spanned<String>>,
    /// StatefulSet governing (headless) Service.
    pub service_name: Option<Name>,
    /// StatefulSet volume claim templates.
    pub volume_claims: Vec<ClaimTemplate>,
    /// Job/CronJob pod restart policy (`Never` or `OnFailure`).
    pub restart_policy: Option<Spanned<String>>,
    /// Job retries before failing.
    pub backoff_limit: Option<Spanned<i64>>,
    /// Job completions.
    pub completions: Option<Spanned<i64>>,
    /// Job parallelism.
    pub parallelism: Option<Spanned<i64>>,
    /// Node selector labels.
    pub node_selector: Labels,
    /// `spec: { … }`: fields of the workload's own spec (DeploymentSpec, …), merged under the DSL's.
    pub spec: Block,
    /// `pod: { … }`: PodSpec fields, merged under the DSL's.
    pub pod: Block,
    /// `pod_labels: { … }`: labels of the pod template (besides the selector labels).
    pub pod_labels: Labels,
    /// `pod_annotations: { … }`: annotations of the pod template.
    pub pod_annotations: Labels,
    /// `security: restricted`: the Pod Security Standards profile its pod and containers meet.
    pub security: Option<Spanned<String>>,
    /// `spread: zones | hosts | [zones, hosts]`: spread its pods across these topology domains.
    pub spread: Vec<Spanned<String>>,
}

impl Workload {
    /// The selector written in `spec: { selector: { matchLabels: … } }`: used exactly as written (no label
    /// of Piceli's added), so an object that already runs keeps its immutable selector.
    pub fn written_selector(&self) -> Option<Vec<(String, String)>> {
        self.spec.labels_at(&["selector", "matchLabels"])
    }
}

/// A workload the app includes as YAML or JSON (`include yaml(…)`), as the items that refer to it see it
/// (a Service, network policy, autoscaler, disruption budget, check, `access`): its kind, name, containers
/// and their ports as a [`Workload`] (nothing else of it is set, and it is never rendered from the model:
/// the included object is), and the labels that select its pods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IncludedWorkload {
    /// Its kind, name, containers and ports.
    pub workload: Workload,
    /// The labels of its pods that select them: `spec.selector.matchLabels`, else the pod template's.
    pub selector: Vec<(String, String)>,
}

/// One container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Container {
    /// Its name.
    pub name: Name,
    /// Its image reference.
    pub image: Spanned<String>,
    /// The image was declared `unpinned(...)`: no digest required.
    pub unpinned: bool,
    /// Entrypoint override.
    pub command: Vec<Spanned<String>>,
    /// Arguments.
    pub args: Vec<Spanned<String>>,
    /// Environment variables, in order.
    pub env: Vec<EnvVar>,
    /// Named ports.
    pub ports: Vec<ContainerPort>,
    /// Requests and limits.
    pub resources: Resources,
    /// Readiness probe.
    pub readiness: Option<Probe>,
    /// Liveness probe.
    pub liveness: Option<Probe>,
    /// Startup probe.
    pub startup: Option<Probe>,
    /// Volume mounts.
    pub mounts: Vec<Mount>,
    /// `Always`, `IfNotPresent` or `Never`.
    pub pull_policy: Option<Spanned<String>>,
    /// `container: { … }`: Container fields, merged under the DSL's.
    pub block: Block,
    /// `env_from: [config(settings), secret(db)]`: every key of these as environment variables.
    pub env_from: Vec<EnvFrom>,
    /// `env: (common_env())`: a Rust expression giving the variables, whose value the runtime's `load`
    /// adds to `env` (as literals, located here) before the app is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_expr: Option<crate::spanned::Loc>,
}

/// A whole ConfigMap or Secret as environment variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EnvFrom {
    /// `config(NAME)`: a declared ConfigMap.
    ConfigMap(Name),
    /// `secret(NAME)`: a declared Secret.
    Secret(Name),
}

/// An environment variable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvVar {
    /// Its name.
    pub name: Name,
    /// Where its value comes from.
    pub value: EnvValue,
}

/// The source of an environment variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EnvValue {
    /// A literal value.
    Literal(Spanned<String>),
    /// A key of a declared ConfigMap: `config(settings.MODE)`.
    ConfigMapKey {
        /// The ConfigMap.
        config_map: Name,
        /// The key.
        key: Name,
    },
    /// A key of a declared Secret: `secret(api.key)`.
    SecretKey {
        /// The Secret.
        secret: Name,
        /// The key.
        key: Name,
    },
    /// A pod field (`field("status.podIP")`).
    Field(Spanned<String>),
}

impl Default for EnvValue {
    fn default() -> Self {
        EnvValue::Literal(Spanned::default())
    }
}

/// A named container port.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContainerPort {
    /// The port's name (what Services and probes refer to).
    pub name: Name,
    /// The port number.
    pub number: Spanned<i64>,
    /// `TCP` (default), `UDP` or `SCTP`.
    pub protocol: Option<Spanned<String>>,
}

/// Requests and limits, by resource name (`cpu`, `memory`, `ephemeral-storage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// What the scheduler reserves.
    pub requests: Vec<(Name, Spanned<String>)>,
    /// The ceiling.
    pub limits: Vec<(Name, Spanned<String>)>,
}

/// A probe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// What it does.
    pub action: ProbeAction,
    /// Seconds before the first probe.
    pub initial_delay: Option<Spanned<i64>>,
    /// Seconds between probes.
    pub period: Option<Spanned<i64>>,
    /// Seconds before a probe times out.
    pub timeout: Option<Spanned<i64>>,
    /// Failures before giving up.
    pub failure_threshold: Option<Spanned<i64>>,
    /// HTTP headers an `http_get` probe sends.
    pub headers: Labels,
}

/// The action of a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ProbeAction {
    /// `http_get("/healthz", port: http)`.
    Http {
        /// Request path.
        path: Spanned<String>,
        /// Container port.
        port: PortRef,
    },
    /// `tcp(port: db)`.
    Tcp {
        /// Container port.
        port: PortRef,
    },
    /// `exec(["cat", "/tmp/ready"])`.
    Exec {
        /// The command.
        command: Vec<Spanned<String>>,
    },
}

impl Default for ProbeAction {
    fn default() -> Self {
        ProbeAction::Tcp {
            port: PortRef::Number(Spanned::default()),
        }
    }
}

/// A reference to a container port, by name or number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PortRef {
    /// A named port.
    Name(Name),
    /// A port number.
    Number(Spanned<i64>),
}

/// A pod volume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Volume {
    /// The volume's name (what mounts refer to).
    pub name: Name,
    /// Where its data comes from.
    pub source: VolumeSource,
}

/// The source of a pod volume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VolumeSource {
    /// A declared ConfigMap.
    ConfigMap(Name),
    /// A declared Secret.
    Secret(Name),
    /// Scratch space.
    EmptyDir {
        /// `Memory` for tmpfs.
        memory: bool,
        /// Size limit quantity.
        size_limit: Option<Spanned<String>>,
    },
    /// A declared PersistentVolumeClaim.
    Pvc(Name),
}

impl Default for VolumeSource {
    fn default() -> Self {
        VolumeSource::EmptyDir {
            memory: false,
            size_limit: None,
        }
    }
}

/// A volume mount.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mount {
    /// Where in the container.
    pub path: Spanned<String>,
    /// Which volume (a pod volume or a StatefulSet claim template).
    pub volume: Name,
    /// Mount read-only.
    pub read_only: bool,
    /// A sub-path of the volume.
    pub sub_path: Option<Spanned<String>>,
}

/// A StatefulSet volume claim template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimTemplate {
    /// The claim's name (mounts refer to it).
    pub name: Name,
    /// Requested storage.
    pub storage: Spanned<String>,
    /// Access modes (`ReadWriteOnce`, …).
    pub access_modes: Vec<Spanned<String>>,
    /// Storage class.
    pub storage_class: Option<Spanned<String>>,
}
