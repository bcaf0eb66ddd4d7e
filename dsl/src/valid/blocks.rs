//! Lowering schema-checked blocks (`pod:`, `container:`, `spec:`, …) and the fields first-class keys own.
//!
//! A block keeps the API's field names; values take the DSL's syntax. Lowering reads the schema only to
//! know what a Rust expression must produce (an integer or a string) and to write quantities given as
//! numbers (`cpu: 2`) and durations given for `…Seconds` fields (`"30s"`) the way the API expects. The
//! checks themselves run in `piceli_core::validate` (at compile time, and again at run time).

use super::block_values::Within;
use super::{Fields, Lower};
use crate::ast::Value;
use piceli_core::Code;
use piceli_core::model::Block;
use piceli_core::schema::{Shape, TypeId};

/// Who sets an API field instead of the block.
pub enum Owner {
    /// The DSL key, when it is given in the same item.
    Key(&'static str),
    /// One of these DSL keys, when any is given.
    Keys(&'static [&'static str]),
    /// Always set by the DSL; the text says how.
    Always(&'static str),
}

/// `(API field, who sets it)` for a block's top-level fields.
pub type Owned = [(&'static str, Owner)];

/// Fields of a Container that first-class container keys set.
pub const CONTAINER_OWNED: &Owned = &[
    (
        "name",
        Owner::Always("the container's name is its key (or the workload's name)"),
    ),
    ("image", Owner::Always("set it with `image:`")),
    ("command", Owner::Key("command")),
    ("args", Owner::Key("args")),
    ("env", Owner::Key("env")),
    ("envFrom", Owner::Key("env_from")),
    ("ports", Owner::Key("ports")),
    ("resources", Owner::Key("resources")),
    ("readinessProbe", Owner::Key("ready")),
    ("livenessProbe", Owner::Key("live")),
    ("startupProbe", Owner::Key("startup")),
    ("volumeMounts", Owner::Key("mounts")),
    ("imagePullPolicy", Owner::Key("pull_policy")),
];

/// Fields of a PodSpec that first-class workload keys set.
pub const POD_OWNED: &Owned = &[
    (
        "containers",
        Owner::Always(
            "containers come from `image:` or `containers:`; set container fields with `container: { … }`",
        ),
    ),
    ("initContainers", Owner::Key("init_containers")),
    ("volumes", Owner::Key("volumes")),
    ("serviceAccountName", Owner::Key("service_account")),
    ("nodeSelector", Owner::Key("node_selector")),
    ("restartPolicy", Owner::Key("restart")),
    ("terminationGracePeriodSeconds", Owner::Key("grace")),
    ("priorityClassName", Owner::Key("priority")),
    ("imagePullSecrets", Owner::Key("pull_secrets")),
    ("topologySpreadConstraints", Owner::Key("spread")),
];

/// A Job's pods always get a restart policy from the DSL (`restart:`, default `Never`).
pub const POD_JOB_OWNED: &Owned = &[
    (
        "containers",
        Owner::Always(
            "containers come from `image:` or `containers:`; set container fields with `container: { … }`",
        ),
    ),
    ("initContainers", Owner::Key("init_containers")),
    ("volumes", Owner::Key("volumes")),
    ("serviceAccountName", Owner::Key("service_account")),
    ("nodeSelector", Owner::Key("node_selector")),
    ("restartPolicy", Owner::Always("set it with `restart:`")),
    ("terminationGracePeriodSeconds", Owner::Key("grace")),
    ("priorityClassName", Owner::Key("priority")),
    ("imagePullSecrets", Owner::Key("pull_secrets")),
    ("topologySpreadConstraints", Owner::Key("spread")),
];

/// Fields of a workload's spec that first-class keys set.
pub const WORKLOAD_SPEC_OWNED: &Owned = &[
    (
        "template",
        Owner::Always(
            "set the pod template with `pod: { … }`, `container: { … }`, `pod_labels:` and `pod_annotations:`",
        ),
    ),
    ("replicas", Owner::Key("replicas")),
    ("serviceName", Owner::Key("service")),
    ("volumeClaimTemplates", Owner::Key("volume_claims")),
    ("schedule", Owner::Always("set it with `schedule:`")),
    ("backoffLimit", Owner::Key("backoff_limit")),
    ("completions", Owner::Key("completions")),
    ("parallelism", Owner::Key("parallelism")),
    ("strategy", Owner::Key("strategy")),
    ("updateStrategy", Owner::Key("strategy")),
];

/// Fields of a ServiceSpec that first-class Service keys set.
pub const SERVICE_OWNED: &Owned = &[
    ("ports", Owner::Keys(&["port", "ports"])),
    ("type", Owner::Key("type")),
];

/// Fields of an IngressSpec that first-class Ingress keys set.
pub const INGRESS_OWNED: &Owned = &[
    ("rules", Owner::Keys(&["paths", "host", "rules"])),
    ("ingressClassName", Owner::Key("class")),
    ("tls", Owner::Key("tls")),
    ("defaultBackend", Owner::Key("default")),
];

/// Fields of a PersistentVolumeClaimSpec that first-class pvc keys set.
pub const PVC_OWNED: &Owned = &[
    ("accessModes", Owner::Key("access")),
    ("storageClassName", Owner::Key("class")),
];

/// Fields of a HorizontalPodAutoscalerSpec that first-class autoscaler keys set.
pub const AUTOSCALER_OWNED: &Owned = &[
    (
        "scaleTargetRef",
        Owner::Always("the target is the workload after `->`"),
    ),
    ("minReplicas", Owner::Key("min")),
    ("maxReplicas", Owner::Always("set it with `max:`")),
    ("metrics", Owner::Keys(&["cpu", "memory"])),
];

/// Fields of a PodDisruptionBudgetSpec that first-class keys set.
pub const BUDGET_OWNED: &Owned = &[
    ("minAvailable", Owner::Key("min_available")),
    ("maxUnavailable", Owner::Key("max_unavailable")),
];

/// Fields of a NetworkPolicySpec that first-class keys set.
pub const NETWORK_POLICY_OWNED: &Owned = &[("ingress", Owner::Keys(&["from", "ports"]))];

/// Fields of a NetworkPolicySpec that the selector form's keys set (`podSelector` is merged: its
/// `matchExpressions` may come from the block).
pub const NETWORK_POLICY_SELECTOR_OWNED: &Owned = &[
    ("policyTypes", Owner::Key("types")),
    ("ingress", Owner::Key("ingress")),
    ("egress", Owner::Key("egress")),
];

/// Top-level fields of a ServiceAccount that the DSL sets.
pub const SERVICE_ACCOUNT_OWNED: &Owned = &[
    ("apiVersion", Owner::Always("Piceli sets it")),
    ("kind", Owner::Always("Piceli sets it")),
    (
        "metadata",
        Owner::Always("set labels and annotations with `labels:` and `annotations:`"),
    ),
    ("automountServiceAccountToken", Owner::Key("automount")),
];

impl Lower {
    /// The block `v`, given under `key` of `f`: lowered against `root`, its owned fields refused (whether
    /// a first-class key sets one is seen in `f`).
    pub fn block_of(
        &mut self,
        v: &Value,
        f: &mut Fields,
        key: &str,
        root: TypeId,
        owned: &Owned,
        owner: &str,
    ) -> Block {
        let Value::Map(m) = v else {
            self.wrong_type(
                v,
                &format!("a map of {} fields", root.short_name()),
                "{ … }",
            );
            return Block::default();
        };
        let desc = format!("{owner} › {key}");
        for (k, _) in &m.entries {
            let Some((_, who)) = owned.iter().find(|(field, _)| *field == k.text) else {
                continue;
            };
            let help = match who {
                Owner::Always(how) => Some(how.to_string()),
                Owner::Key(dsl) => f.key(dsl).map(|_| format!("set it with `{dsl}:` only")),
                Owner::Keys(keys) => keys
                    .iter()
                    .find(|dsl| f.key(dsl).is_some())
                    .map(|dsl| format!("set it with `{dsl}:` only")),
            };
            if let Some(help) = help {
                self.fail(
                    Code::FieldSetByKey,
                    k.sp,
                    format!("`{}` in {desc} is set by Piceli's own key", k.text),
                    help,
                );
            }
        }
        let owned_and_set = |name: &str| {
            owned.iter().any(|(field, who)| {
                *field == name
                    && match who {
                        Owner::Always(_) => true,
                        Owner::Key(dsl) => f.key(dsl).is_some(),
                        Owner::Keys(keys) => keys.iter().any(|dsl| f.key(dsl).is_some()),
                    }
            })
        };
        let skip: Vec<&str> = m
            .entries
            .iter()
            .map(|(k, _)| k.text.as_str())
            .filter(|k| owned_and_set(k))
            .collect();
        self.block_map::<&'static Shape>(m, Within::Object(root), &desc, &skip)
    }
}
