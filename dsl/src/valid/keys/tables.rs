//! The key tables: one per item kind, with what each key means (docs/dsl.md's key reference).

use super::{Key, Kinds};

const fn key(name: &'static str, doc: &'static str) -> Key {
    Key {
        name,
        kinds: Kinds::ALL,
        doc,
    }
}

const fn only(name: &'static str, kinds: Kinds, doc: &'static str) -> Key {
    Key { name, kinds, doc }
}

const LABELS: Key = key("labels", "labels of this object alone");
const ANNOTATIONS: Key = key("annotations", "annotations of this object alone");

/// The keys of one container: at the top of a workload with one container, or in each entry of
/// `containers:` and `init_containers:`.
pub const CONTAINER: &[Key] = &[
    key(
        "image",
        "the image, pinned by digest; `unpinned(\"nginx:1.27\")` opts out, `build(package: …)` builds it from the workspace",
    ),
    key("command", "the entrypoint (`command`), a list of strings"),
    key("args", "its arguments (`args`), a list of strings"),
    key(
        "env",
        "environment: literals, `config(MAP.KEY)`, `secret(SECRET.KEY)`, `field(\"status.podIP\")`, Rust expressions",
    ),
    key(
        "ports",
        "named container ports: `{ http: 8000, dns: port(53, protocol: \"UDP\") }`",
    ),
    key(
        "resources",
        "`{ cpu: \"250m\", memory: \"256Mi\" }` (requests), or `{ requests: { … }, limits: { … } }`",
    ),
    key(
        "ready",
        "readiness probe: `http_get(PATH, port: …)`, `tcp(port: …)` or `exec([…])`, with the probe options",
    ),
    key("live", "liveness probe, in the form of `ready:`"),
    key("startup", "startup probe, in the form of `ready:`"),
    key(
        "mounts",
        "`{ \"/path\": VOLUME }`, or `volume(VOLUME, read_only: true, sub_path: \"file\")`",
    ),
    key(
        "pull_policy",
        "`imagePullPolicy`: `\"IfNotPresent\"`, `\"Always\"` or `\"Never\"`",
    ),
    key(
        "container",
        "a block of Container fields (schema-checked, merged under the keys above)",
    ),
    key(
        "env_from",
        "`[config(NAME), secret(NAME)]`: every key of a ConfigMap or Secret (`envFrom`)",
    ),
];

/// The pod-level keys of a workload (besides its single container's [`CONTAINER`] keys).
pub const WORKLOAD: &[Key] = &[
    only(
        "replicas",
        Kinds::SCALABLE,
        "the number of pods; an `autoscaler` owns it once the workload exists",
    ),
    key(
        "containers",
        "several containers: `{ NAME: { image: …, … } }`, each with the container keys",
    ),
    key(
        "init_containers",
        "init containers, in the form of `containers:`",
    ),
    key(
        "volumes",
        "pod volumes: `config_map(NAME)`, `secret(NAME)`, `pvc(NAME)`, `empty_dir(memory: true, size_limit: \"1Gi\")`",
    ),
    LABELS,
    ANNOTATIONS,
    key(
        "service_account",
        "the pods' ServiceAccount (a declared or `external` one)",
    ),
    only(
        "schedule",
        Kinds::CRON_JOB,
        "when it runs, in cron syntax (required)",
    ),
    only(
        "service",
        Kinds::STATEFUL_SET,
        "its governing Service (usually `type: headless`), which must select it",
    ),
    only(
        "volume_claims",
        Kinds::STATEFUL_SET,
        "claim templates: `{ data: { storage: \"10Gi\", access: [\"ReadWriteOnce\"], class: \"fast\" } }`",
    ),
    only(
        "restart",
        Kinds::TO_COMPLETION,
        "the pods' restart policy: `\"Never\"` or `\"OnFailure\"`",
    ),
    only(
        "backoff_limit",
        Kinds::TO_COMPLETION,
        "retries before the Job fails",
    ),
    only(
        "completions",
        Kinds::TO_COMPLETION,
        "successful pods the Job needs",
    ),
    only(
        "parallelism",
        Kinds::TO_COMPLETION,
        "pods the Job runs at once",
    ),
    key("node_selector", "`nodeSelector` labels the nodes must have"),
    key(
        "spec",
        "a block of the workload's own spec (DeploymentSpec, StatefulSetSpec, DaemonSetSpec, JobSpec, CronJobSpec)",
    ),
    key("pod", "a block of PodSpec fields"),
    key(
        "pod_labels",
        "labels of the pod template (besides the selector labels Piceli sets)",
    ),
    key("pod_annotations", "annotations of the pod template"),
    key(
        "grace",
        "`terminationGracePeriodSeconds`: seconds, or a duration such as `\"1m\"`",
    ),
    key("priority", "`priorityClassName`"),
    key(
        "pull_secrets",
        "`imagePullSecrets`: `[regcred]`, names of declared or `external` Secrets",
    ),
    key(
        "security",
        "`restricted`: the Pod Security Standards \"restricted\" profile for the pod and every container",
    ),
    key(
        "spread",
        "`zones`, `hosts` or both: `topologySpreadConstraints` over the workload's pods",
    ),
    only(
        "strategy",
        Kinds::LONG_RUNNING,
        "`rolling(max_surge:, max_unavailable:)`, `recreate` (deployment) or `on_delete` (stateful_set, daemon_set)",
    ),
];

/// `service NAME -> WORKLOAD { … }`.
pub const SERVICE: &[Key] = &[
    key(
        "port",
        "one port: `80 => http` (to the container port named `http`), `8080 => 80`, or `80` (the same number)",
    ),
    key(
        "ports",
        "named ports: `{ http: 80 => http, metrics: 9090 => metrics }`",
    ),
    key(
        "type",
        "`cluster_ip` (default), `headless`, `node_port` or `load_balancer`",
    ),
    key(
        "node_ports",
        "fixed node ports by Service port name: `{ http: 30080 }` (node_port, load_balancer)",
    ),
    key(
        "access",
        "`forward(local: 18080, port: http, health: \"/\")`: a loopback port forward for `access` and checks",
    ),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of ServiceSpec fields"),
];

/// `service NAME { spec: { … } }`: a Service of no workload (ExternalName, its own selector, or none with
/// Endpoints made by hand), rendered as written.
pub const SERVICE_OF_NO_WORKLOAD: &[Key] = &[
    LABELS,
    ANNOTATIONS,
    key(
        "spec",
        "the whole ServiceSpec as written: `type: \"ExternalName\"` with `externalName`, or `ports` (and a `selector` of the pods' own labels)",
    ),
];

/// `config_map NAME { … }` with metadata (the short form's keys are all data).
pub const CONFIG_MAP: &[Key] = &[
    key(
        "data",
        "the keys and values: strings, numbers, Rust expressions or `file(\"path\")`",
    ),
    LABELS,
    ANNOTATIONS,
];

/// `secret NAME { … }` with metadata or a type (the short form's keys are all data).
pub const SECRET: &[Key] = &[
    key("type", "the Secret type, e.g. `\"kubernetes.io/tls\"`"),
    key(
        "data",
        "the keys and where their values come from: `from_env(\"VAR\")`, `from_file(\"path\")`, `generated(length: 32)`",
    ),
    LABELS,
    ANNOTATIONS,
];

/// `pvc NAME { … }`.
pub const PVC: &[Key] = &[
    key("storage", "the size requested, e.g. `\"5Gi\"`"),
    key("access", "access modes, e.g. `[\"ReadWriteOnce\"]`"),
    key("class", "the StorageClass name"),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of PersistentVolumeClaimSpec fields"),
];

/// `network_policy NAME -> WORKLOAD { … }`.
pub const NETWORK_POLICY: &[Key] = &[
    key(
        "from",
        "who may connect: workloads of the app and `namespace(\"NAME\")`; none and no `ports:` denies all ingress",
    ),
    key(
        "ports",
        "the workload's container ports that are open, by name or number (all when left out)",
    ),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of NetworkPolicySpec fields"),
];

/// `network_policy NAME { pods: { … }, … }`, the selector form.
pub const NETWORK_POLICY_SELECTOR: &[Key] = &[
    key(
        "pods",
        "the pods it applies to, by labels (`podSelector.matchLabels`); `{}` is every pod",
    ),
    key(
        "types",
        "`policyTypes`: `[\"Ingress\"]`, `[\"Egress\"]` or both",
    ),
    key(
        "ingress",
        "rules `[{ from: [peers], ports: [ports] }]`; peers are `pods(…)`, `namespaces(…)`, `cidr(…, except: […])`",
    ),
    key("egress", "rules `[{ to: [peers], ports: [ports] }]`"),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of NetworkPolicySpec fields"),
];

/// `ingress NAME { … }`.
pub const INGRESS: &[Key] = &[
    key(
        "host",
        "the host it serves (`*.example.com` for a wildcard)",
    ),
    key("class", "`ingressClassName`"),
    key(
        "tls",
        "a declared or `external` Secret with the certificate, for every host; or `{ SECRET: [\"HOST\", …], … }`, one TLS entry per Secret",
    ),
    key(
        "paths",
        "`{ \"/\": SERVICE => PORT }` for `host:`; the port by name or number, or the Service's first",
    ),
    key(
        "rules",
        "several hosts: `{ \"HOST\": { \"/\": SERVICE => PORT } }`",
    ),
    key(
        "default",
        "`SERVICE => PORT`: the default backend, for requests no path matches",
    ),
    key(
        "path_type",
        "`\"Prefix\"` (default), `\"Exact\"` or `\"ImplementationSpecific\"`, for every path; one path's own: `exact(…)`, `prefix(…)`, `implementation_specific(…)` around its backend",
    ),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of IngressSpec fields"),
];

/// `autoscaler NAME -> WORKLOAD { … }`.
pub const AUTOSCALER: &[Key] = &[
    key("min", "the fewest replicas (at least 1)"),
    key("max", "the most replicas"),
    key("cpu", "target average CPU utilisation, in percent"),
    key("memory", "target average memory utilisation, in percent"),
    LABELS,
    ANNOTATIONS,
    key(
        "spec",
        "a block of HorizontalPodAutoscalerSpec (autoscaling/v2) fields",
    ),
];

/// `disruption_budget NAME -> WORKLOAD { … }`.
pub const DISRUPTION_BUDGET: &[Key] = &[
    key(
        "min_available",
        "pods that must stay up: a number or a percentage",
    ),
    key(
        "max_unavailable",
        "pods that may be down: a number or a percentage",
    ),
    LABELS,
    ANNOTATIONS,
    key("spec", "a block of PodDisruptionBudgetSpec fields"),
];

/// `service_account NAME { … }`.
pub const SERVICE_ACCOUNT: &[Key] = &[
    key(
        "automount",
        "whether pods mount its token (`automountServiceAccountToken`)",
    ),
    LABELS,
    ANNOTATIONS,
    key(
        "spec",
        "a block of the ServiceAccount's own top-level fields (`imagePullSecrets`, …)",
    ),
];

/// `role` / `cluster_role NAME { … }`.
pub const ROLE: &[Key] = &[
    key(
        "rules",
        "`[rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\"], names: [..])]`",
    ),
    LABELS,
    ANNOTATIONS,
];

/// `role_binding` / `cluster_role_binding NAME { … }`.
pub const ROLE_BINDING: &[Key] = &[
    key(
        "role",
        "the declared role it grants, or `cluster_role(\"view\")`: a ClusterRole someone else makes",
    ),
    key(
        "subjects",
        "who it grants it to: declared or `external` ServiceAccounts by name, `user(\"…\")`, `group(\"…\")`, `service_account(\"NAMESPACE\", \"NAME\")`",
    ),
    LABELS,
    ANNOTATIONS,
];

/// `operator NAME { … }`.
pub const OPERATOR: &[Key] = &[
    key(
        "image",
        "the operator's image (this binary: `build(package: …)`, or pinned by digest)",
    ),
    key(
        "replicas",
        "how many pods serve the webhooks and controllers",
    ),
    key(
        "tls",
        "`cert_manager(issuer: self_signed)`, `cert_manager(cluster_issuer: \"NAME\")` or `secret(NAME)`",
    ),
];

/// The options block of a `validate` / `mutate` item.
pub const WEBHOOK_OPTIONS: &[Key] = &[
    key(
        "failure",
        "`fail` (default) or `ignore` when the webhook cannot answer",
    ),
    key("timeout", "seconds the API server waits, 1–30 (default 10)"),
    key(
        "namespaces",
        "labels a namespace must have (`namespaceSelector`)",
    ),
    key("objects", "labels an object must have (`objectSelector`)"),
];

/// The options block of a `controller` item.
pub const CONTROLLER_OPTIONS: &[Key] = &[
    key(
        "labels",
        "labels an object must have to be reconciled: `{ key: \"value\" }` or a selector string",
    ),
    key(
        "namespaces",
        "`all` or `[a, b]`: the namespaces it watches (default: the operator's)",
    ),
    key("every", "a periodic reconcile, as a duration (`\"5m\"`)"),
    key(
        "writes",
        "what else it may write: `status` and further resources, for its RBAC",
    ),
];

/// A table of the reference (only the docs test reads them): the item as written, its keys, and whether they depend on the workload kind.
#[cfg(test)]
pub struct Table {
    pub item: &'static str,
    pub keys: &'static [Key],
    pub per_kind: bool,
}

/// Every table, in the order of docs/dsl.md.
#[cfg(test)]
pub const TABLES: &[Table] = &[
    Table {
        item: "Workloads (`deployment`, `stateful_set`, `daemon_set`, `job`, `cron_job`)",
        keys: WORKLOAD,
        per_kind: true,
    },
    Table {
        item: "A container (at the top of a workload, or each entry of `containers:` / `init_containers:`)",
        keys: CONTAINER,
        per_kind: false,
    },
    Table {
        item: "`service NAME -> WORKLOAD { … }`",
        keys: SERVICE,
        per_kind: false,
    },
    Table {
        item: "`service NAME { spec: … }` (a Service of no workload)",
        keys: SERVICE_OF_NO_WORKLOAD,
        per_kind: false,
    },
    Table {
        item: "`config_map NAME { … }` with metadata",
        keys: CONFIG_MAP,
        per_kind: false,
    },
    Table {
        item: "`secret NAME { … }` with metadata or a type",
        keys: SECRET,
        per_kind: false,
    },
    Table {
        item: "`pvc NAME { … }`",
        keys: PVC,
        per_kind: false,
    },
    Table {
        item: "`network_policy NAME -> WORKLOAD { … }`",
        keys: NETWORK_POLICY,
        per_kind: false,
    },
    Table {
        item: "`network_policy NAME { pods: … }` (the selector form)",
        keys: NETWORK_POLICY_SELECTOR,
        per_kind: false,
    },
    Table {
        item: "`ingress NAME { … }`",
        keys: INGRESS,
        per_kind: false,
    },
    Table {
        item: "`autoscaler NAME -> WORKLOAD { … }`",
        keys: AUTOSCALER,
        per_kind: false,
    },
    Table {
        item: "`disruption_budget NAME -> WORKLOAD { … }`",
        keys: DISRUPTION_BUDGET,
        per_kind: false,
    },
    Table {
        item: "`service_account NAME { … }`",
        keys: SERVICE_ACCOUNT,
        per_kind: false,
    },
    Table {
        item: "`role` / `cluster_role NAME { … }`",
        keys: ROLE,
        per_kind: false,
    },
    Table {
        item: "`role_binding` / `cluster_role_binding NAME { … }`",
        keys: ROLE_BINDING,
        per_kind: false,
    },
    Table {
        item: "`operator NAME { … }`",
        keys: OPERATOR,
        per_kind: false,
    },
    Table {
        item: "`validate` / `mutate … { … }` options",
        keys: WEBHOOK_OPTIONS,
        per_kind: false,
    },
    Table {
        item: "`controller … { … }` options",
        keys: CONTROLLER_OPTIONS,
        per_kind: false,
    },
];
