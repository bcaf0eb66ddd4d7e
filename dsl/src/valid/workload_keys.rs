//! A workload's keys and their readers, in the order they are read: its own (pod-level) keys, then its
//! containers (`containers:`, or the single container's keys from the same body: `container_keys.rs`).
//! A key of other workload kinds is reported where it would be read ([`keys::read_kind`]).

use super::blocks::{Owned, POD_JOB_OWNED, POD_OWNED, WORKLOAD_SPEC_OWNED};
use super::container_keys::{CONTAINER, container_fields, containers};
use super::keys::{self, Key, Kinds, Reading};
use super::shortcuts;
use super::workload::{claims, text_map, volumes};
use super::{Fields, Lower};
use crate::ast::{Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;

/// The pod-level keys of a workload (besides its single container's [`CONTAINER`] keys).
pub const WORKLOAD: &[Key<Reading<WorkloadRead>>] = &[
    Key::only(
        "replicas",
        Kinds::SCALABLE,
        "the number of pods; an `autoscaler` owns it once the workload exists",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.replicas = lw.int(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new("labels", "labels of this object alone", Some(text_map_key)),
    Key::new(
        "annotations",
        "annotations of this object alone",
        Some(text_map_key),
    ),
    Key::new(
        "pod_labels",
        "labels of the pod template (besides the selector labels Piceli sets)",
        Some(text_map_key),
    ),
    Key::new(
        "pod_annotations",
        "annotations of the pod template",
        Some(text_map_key),
    ),
    Key::new(
        "spec",
        "a block of the workload's own spec (DeploymentSpec, StatefulSetSpec, DaemonSetSpec, JobSpec, CronJobSpec)",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::workload_spec(r.item.w.kind);
                r.item.w.spec = lw.block_of(v, f, key, root, WORKLOAD_SPEC_OWNED, &r.owner);
            }
        }),
    ),
    Key::new(
        "pod",
        "a block of PodSpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let owned: &Owned = if r.item.w.kind.runs_to_completion() {
                    POD_JOB_OWNED
                } else {
                    POD_OWNED
                };
                r.item.w.pod = lw.block_of(v, f, key, schema::POD_SPEC, owned, &r.owner);
            }
        }),
    ),
    Key::new(
        "grace",
        "`terminationGracePeriodSeconds`: seconds, or a duration such as `\"1m\"`",
        Some(|lw, r, f, key, v| {
            if let (Some(k), Some(v)) = (f.key(key), v) {
                shortcuts::grace(lw, &mut r.item.w, k, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "priority",
        "`priorityClassName`",
        Some(|lw, r, f, key, v| {
            if let (Some(k), Some(v)) = (f.key(key), v) {
                shortcuts::priority(lw, &mut r.item.w, k, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "pull_secrets",
        "`imagePullSecrets`: `[regcred]`, names of declared or `external` Secrets",
        Some(|lw, r, f, key, v| {
            if let (Some(k), Some(v)) = (f.key(key), v) {
                shortcuts::pull_secrets(lw, &mut r.item.w, k, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "security",
        "`restricted`: the Pod Security Standards \"restricted\" profile for the pod and every container",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                shortcuts::security(lw, &mut r.item.w, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "spread",
        "`zones`, `hosts` or both: `topologySpreadConstraints` over the workload's pods",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                shortcuts::spread(lw, &mut r.item.w, v, &r.owner);
            }
        }),
    ),
    Key::only(
        "strategy",
        Kinds::LONG_RUNNING,
        "`rolling(max_surge:, max_unavailable:)`, `recreate` (deployment) or `on_delete` (stateful_set, daemon_set)",
        Some(|lw, r, f, key, v| {
            if let (Some(k), Some(v)) = (f.key(key), v) {
                shortcuts::strategy(lw, &mut r.item.w, k, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "node_selector",
        "`nodeSelector` labels the nodes must have",
        Some(text_map_key),
    ),
    Key::new(
        "service_account",
        "the pods' ServiceAccount (a declared or `external` one)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.service_account = lw.name(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "schedule",
        Kinds::CRON_JOB,
        "when it runs, in cron syntax (required)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.schedule = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "restart",
        Kinds::TO_COMPLETION,
        "the pods' restart policy: `\"Never\"` or `\"OnFailure\"`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.restart_policy = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "backoff_limit",
        Kinds::TO_COMPLETION,
        "retries before the Job fails",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.backoff_limit = lw.int(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "completions",
        Kinds::TO_COMPLETION,
        "successful pods the Job needs",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.completions = lw.int(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "parallelism",
        Kinds::TO_COMPLETION,
        "pods the Job runs at once",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.parallelism = lw.int(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "service",
        Kinds::STATEFUL_SET,
        "its governing Service (usually `type: headless`), which must select it",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.w.service_name = lw.name(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::only(
        "volume_claims",
        Kinds::STATEFUL_SET,
        "claim templates: `{ data: { storage: \"10Gi\", access: [\"ReadWriteOnce\"], class: \"fast\" } }`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.w.volume_claims = claims(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "volumes",
        "pod volumes: `config_map(NAME)`, `secret(NAME)`, `pvc(NAME)`, `empty_dir(memory: true, size_limit: \"1Gi\")`",
        Some(volumes_key),
    ),
    Key::new(
        "init_containers",
        "init containers, in the form of `containers:`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                let w = &mut r.item.w;
                w.init_containers = containers(lw, v, &r.owner, &w.name.v);
            }
        }),
    ),
    Key::new(
        "containers",
        "several containers: `{ NAME: { image: …, … } }`, each with the container keys",
        Some(containers_key),
    ),
];

/// A workload being read, and where its name is (for the errors of the item as a whole).
#[derive(Default)]
pub struct WorkloadRead {
    pub w: Workload,
    pub name_sp: Option<Sp>,
}

/// `labels:`, `annotations:`, `pod_labels:`, `pod_annotations:`, `node_selector:`: maps of text, written
/// out or from Rust.
fn text_map_key(
    lw: &mut Lower,
    r: &mut Reading<WorkloadRead>,
    _: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let Some(v) = v else { return };
    let w = &mut r.item.w;
    let map = text_map(lw, v, &r.owner, &w.name.v, key);
    *match key {
        "labels" => &mut w.labels,
        "annotations" => &mut w.annotations,
        "pod_labels" => &mut w.pod_labels,
        "pod_annotations" => &mut w.pod_annotations,
        _ => &mut w.node_selector,
    } = map;
}

/// `volumes:`; first, a cron job's missing schedule (reported here, after the keys it is read among).
fn volumes_key(
    lw: &mut Lower,
    r: &mut Reading<WorkloadRead>,
    _: &mut Fields,
    _: &'static str,
    v: Option<&Value>,
) {
    if r.item.w.kind == WorkloadKind::CronJob
        && r.item.w.schedule.is_none()
        && let Some(sp) = r.item.name_sp
    {
        lw.fail(
            Code::MissingKey,
            sp,
            format!("{} has no schedule", r.owner),
            "add `schedule: \"*/5 * * * *\"`",
        );
    }
    if let Some(v) = v {
        r.item.w.volumes = volumes(lw, v, &r.owner);
    }
}

/// `containers:`, where container keys at the top belong inside one of them; without it, the single
/// container's keys are read from the workload's own body.
fn containers_key(
    lw: &mut Lower,
    r: &mut Reading<WorkloadRead>,
    f: &mut Fields,
    _: &'static str,
    v: Option<&Value>,
) {
    let owner = &r.owner;
    let w = &mut r.item.w;
    let Some(v) = v else {
        let desc = format!("{owner} › container {}", w.name.v);
        if let Some(sp) = r.item.name_sp
            && let Some(c) = container_fields(lw, f, w.name.clone(), sp, &desc, &w.name.v)
        {
            w.containers.push(c);
        }
        return;
    };
    for key in keys::names(CONTAINER, Kinds::ALL) {
        if let Some(k) = f.key(key) {
            f.take(key);
            lw.fail(
                Code::WrongType,
                k.sp,
                format!("`{key}` is a container key, and {owner} lists its containers under `containers:`"),
                "move it into one of the containers, or drop `containers:` and keep one container at the top",
            );
        }
    }
    w.containers = containers(lw, v, owner, &w.name.v);
    // A container left out for its own error (no image) is not also "no containers".
    let given = matches!(v, Value::Map(m) if !m.entries.is_empty());
    if w.containers.is_empty() && !given {
        lw.fail(
            Code::MissingKey,
            v.sp(),
            format!("{owner} has no containers"),
            "add `NAME: { image: \"…\" }`",
        );
    }
}
