//! The key tables: one per item kind, with what each key means (docs/dsl.md's key reference).

use super::{Fields, Key, Kinds, Lower};
use crate::ast::Value;
use piceli_core::model::Labels;

const fn key(name: &'static str, doc: &'static str) -> Key {
    Key::new(name, doc, None)
}

const fn only(name: &'static str, kinds: Kinds, doc: &'static str) -> Key {
    Key {
        name,
        kinds,
        doc,
        read: None,
    }
}

const LABELS_DOC: &str = "labels of this object alone";
const ANNOTATIONS_DOC: &str = "annotations of this object alone";
const LABELS: Key = key("labels", LABELS_DOC);
const ANNOTATIONS: Key = key("annotations", ANNOTATIONS_DOC);

/// An item being read by its table: its description (`autoscaler web`), its labels and annotations, and
/// its own fields `T`. The context of every reader of the item's table.
#[derive(Default)]
pub struct Reading<T> {
    pub owner: String,
    pub labels: Labels,
    pub annotations: Labels,
    pub item: T,
}

impl<T: Default> Reading<T> {
    /// An item described as `owner`, nothing read yet.
    pub fn new(owner: String) -> Self {
        Reading {
            owner,
            ..Reading::default()
        }
    }
}

/// `labels:` of an item whose table has readers.
pub const fn labels<T>() -> Key<Reading<T>> {
    Key::new("labels", LABELS_DOC, Some(read_meta::<T>))
}

/// `annotations:` of an item whose table has readers.
pub const fn annotations<T>() -> Key<Reading<T>> {
    Key::new("annotations", ANNOTATIONS_DOC, Some(read_meta::<T>))
}

fn read_meta<T>(
    lw: &mut Lower,
    r: &mut Reading<T>,
    _: &mut Fields,
    name: &'static str,
    v: Option<&Value>,
) {
    if let Some(v) = v {
        let labels = lw.labels(v, &format!("{} › {name}", r.owner));
        if name == "annotations" {
            r.annotations = labels;
        } else {
            r.labels = labels;
        }
    }
}

/// The pod-level keys of a workload (besides its single container's `container_keys::CONTAINER` keys).
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

/// A table of the reference (only the docs test reads them): the item as written, its keys, and whether they depend on the workload kind.
#[cfg(test)]
pub struct Table {
    pub item: &'static str,
    pub keys: Vec<Key>,
    pub per_kind: bool,
}

/// A table of the reference, without its readers.
#[cfg(test)]
fn table<C>(item: &'static str, keys: &[Key<C>], per_kind: bool) -> Table {
    Table {
        item,
        keys: keys.iter().map(Key::entry).collect(),
        per_kind,
    }
}

/// Every table, in the order of docs/dsl.md.
#[cfg(test)]
pub fn tables() -> Vec<Table> {
    use crate::valid::{
        config, container_keys, controller, netpol, network, operator, policy, rbac, service,
    };
    vec![
        table(
            "Workloads (`deployment`, `stateful_set`, `daemon_set`, `job`, `cron_job`)",
            WORKLOAD,
            true,
        ),
        table(
            "A container (at the top of a workload, or each entry of `containers:` / `init_containers:`)",
            container_keys::CONTAINER,
            false,
        ),
        table("`service NAME -> WORKLOAD { … }`", service::SERVICE, false),
        table(
            "`service NAME { spec: … }` (a Service of no workload)",
            service::SERVICE_OF_NO_WORKLOAD,
            false,
        ),
        table("`config_map NAME { … }` with metadata", CONFIG_MAP, false),
        table("`secret NAME { … }` with metadata or a type", SECRET, false),
        table("`pvc NAME { … }`", config::PVC, false),
        table(
            "`network_policy NAME -> WORKLOAD { … }`",
            network::NETWORK_POLICY,
            false,
        ),
        table(
            "`network_policy NAME { pods: … }` (the selector form)",
            netpol::NETWORK_POLICY_SELECTOR,
            false,
        ),
        table("`ingress NAME { … }`", network::INGRESS, false),
        table(
            "`autoscaler NAME -> WORKLOAD { … }`",
            policy::AUTOSCALER,
            false,
        ),
        table(
            "`disruption_budget NAME -> WORKLOAD { … }`",
            policy::DISRUPTION_BUDGET,
            false,
        ),
        table("`service_account NAME { … }`", rbac::SERVICE_ACCOUNT, false),
        table("`role` / `cluster_role NAME { … }`", rbac::ROLE, false),
        table(
            "`role_binding` / `cluster_role_binding NAME { … }`",
            rbac::ROLE_BINDING,
            false,
        ),
        table("`operator NAME { … }`", operator::OPERATOR, false),
        table(
            "`validate` / `mutate … { … }` options",
            operator::WEBHOOK_OPTIONS,
            false,
        ),
        table(
            "`controller … { … }` options",
            controller::CONTROLLER_OPTIONS,
            false,
        ),
    ]
}
