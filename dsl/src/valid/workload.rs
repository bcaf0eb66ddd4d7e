//! Lowering workloads: pod-level keys, blocks and shortcuts, volumes and claim templates (containers: `container.rs`).

use super::blocks::{Owned, POD_JOB_OWNED, POD_OWNED, WORKLOAD_SPEC_OWNED};
use super::container_keys::{CONTAINER, container_fields, containers};
use super::keys::{self, Kinds};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

pub(super) fn workload(lw: &mut Lower, item: &Item) {
    let kind = match item.keyword.text.as_str() {
        "stateful_set" => WorkloadKind::StatefulSet,
        "daemon_set" => WorkloadKind::DaemonSet,
        "job" => WorkloadKind::Job,
        "cron_job" => WorkloadKind::CronJob,
        _ => WorkloadKind::Deployment,
    };
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("{} {}", kind.keyword(), name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut w = Workload {
        kind,
        name: name.clone(),
        ..Workload::default()
    };

    if let Some(v) = f.take("replicas") {
        if kind.scalable() {
            w.replicas = lw.int(v, format!("{owner} › replicas"));
        } else {
            not_for(lw, &f, "replicas", kind);
        }
    }
    if let Some(v) = f.take("labels") {
        w.labels = text_map(lw, v, &owner, &name.v, "labels");
    }
    if let Some(v) = f.take("annotations") {
        w.annotations = text_map(lw, v, &owner, &name.v, "annotations");
    }
    if let Some(v) = f.take("pod_labels") {
        w.pod_labels = text_map(lw, v, &owner, &name.v, "pod_labels");
    }
    if let Some(v) = f.take("pod_annotations") {
        w.pod_annotations = text_map(lw, v, &owner, &name.v, "pod_annotations");
    }
    w.spec = lw.block(
        &mut f,
        "spec",
        schema::workload_spec(kind),
        WORKLOAD_SPEC_OWNED,
        &owner,
    );
    let pod_owned: &Owned = if kind.runs_to_completion() {
        POD_JOB_OWNED
    } else {
        POD_OWNED
    };
    w.pod = lw.block(&mut f, "pod", schema::POD_SPEC, pod_owned, &owner);
    super::shortcuts::workload(lw, &mut f, &mut w, &owner);
    if let Some(v) = f.take("node_selector") {
        w.node_selector = text_map(lw, v, &owner, &name.v, "node_selector");
    }
    if let Some(v) = f.take("service_account") {
        w.service_account = lw.name(v, format!("{owner} › service_account"));
    }
    for (key, allowed, slot) in [
        ("schedule", kind == WorkloadKind::CronJob, &mut w.schedule),
        ("restart", kind.runs_to_completion(), &mut w.restart_policy),
    ] {
        if let Some(v) = f.take(key) {
            if allowed {
                *slot = lw.str(v, format!("{owner} › {key}"));
            } else {
                not_for(lw, &f, key, kind);
            }
        }
    }
    for (key, slot) in [
        ("backoff_limit", &mut w.backoff_limit),
        ("completions", &mut w.completions),
        ("parallelism", &mut w.parallelism),
    ] {
        if let Some(v) = f.take(key) {
            if kind.runs_to_completion() {
                *slot = lw.int(v, format!("{owner} › {key}"));
            } else {
                not_for(lw, &f, key, kind);
            }
        }
    }
    if let Some(v) = f.take("service") {
        if kind == WorkloadKind::StatefulSet {
            w.service_name = lw.name(v, format!("{owner} › service"));
        } else {
            not_for(lw, &f, "service", kind);
        }
    }
    if let Some(v) = f.take("volume_claims") {
        if kind == WorkloadKind::StatefulSet {
            w.volume_claims = claims(lw, v, &owner);
        } else {
            not_for(lw, &f, "volume_claims", kind);
        }
    }
    if kind == WorkloadKind::CronJob && w.schedule.is_none() {
        lw.fail(
            Code::MissingKey,
            name_sp(item),
            format!("{owner} has no schedule"),
            "add `schedule: \"*/5 * * * *\"`",
        );
    }
    if let Some(v) = f.take("volumes") {
        w.volumes = volumes(lw, v, &owner);
    }
    if let Some(v) = f.take("init_containers") {
        w.init_containers = containers(lw, v, &owner, &name.v);
    }
    if let Some(v) = f.take("containers") {
        // With `containers:`, container keys at the top belong inside one of them.
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
        w.containers = containers(lw, v, &owner, &name.v);
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
    } else {
        let desc = format!("{owner} › container {}", name.v);
        if let Some(c) = container_fields(lw, &mut f, name.clone(), name_sp(item), &desc, &name.v) {
            w.containers.push(c);
        }
    }
    // Only this kind's keys: "accepts:" and did-you-mean never offer `schedule` to a deployment.
    let mut allowed = keys::names(keys::WORKLOAD, Kinds::of(kind));
    allowed.extend(keys::names(CONTAINER, Kinds::ALL));
    f.finish(lw, &allowed);
    lw.app.workloads.push(w);
}

fn name_sp(item: &Item) -> Sp {
    item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp)
}

/// A key of another workload kind, saying which kinds it is for (from the key table).
fn not_for(lw: &mut Lower, f: &Fields, key: &str, kind: WorkloadKind) {
    if let Some(k) = f.key(key) {
        let help = match keys::find(keys::WORKLOAD, key) {
            Some(entry) => format!(
                "remove it: `{key}` applies to {}",
                entry.kinds.keywords().join(", ")
            ),
            None => "remove it".to_string(),
        };
        lw.fail(
            Code::UnknownKey,
            k.sp,
            format!("`{key}` does not apply to a {}", kind.keyword()),
            help,
        );
    }
}

fn volumes(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Volume> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › volumes"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › volume {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let Some(call) = lw.call(
            val,
            &["config_map", "secret", "empty_dir", "pvc"],
            "config_map(settings)",
        ) else {
            continue;
        };
        let source = match call.name.text.as_str() {
            "empty_dir" => {
                let mut nf = lw.named(call, &desc);
                let memory = nf.take("memory").and_then(|m| lw.bool(m)).unwrap_or(false);
                let size_limit = nf
                    .take("size_limit")
                    .and_then(|s| lw.text(s, format!("{desc} › size_limit")));
                nf.finish(lw, &["memory", "size_limit"]);
                VolumeSource::EmptyDir { memory, size_limit }
            }
            kind => {
                let example = format!("{kind}(NAME)");
                let Some(arg) = lw.arg(call, 0, "the name of what it mounts", &example) else {
                    continue;
                };
                let Some(target) = lw.name(arg, format!("{desc} › {kind}")) else {
                    continue;
                };
                match kind {
                    "config_map" => VolumeSource::ConfigMap(target),
                    "secret" => VolumeSource::Secret(target),
                    _ => VolumeSource::Pvc(target),
                }
            }
        };
        out.push(Volume { name, source });
    }
    out
}

fn claims(lw: &mut Lower, v: &Value, owner: &str) -> Vec<ClaimTemplate> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › volume_claims"));
    for (k, body) in f.all() {
        let desc = format!("{owner} › volume claim {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut cf = Fields::of(lw, Some(body), desc.clone());
        let storage = match cf.take("storage") {
            Some(s) => lw.text(s, format!("{desc} › storage")),
            None => {
                lw.fail(
                    Code::MissingKey,
                    k.sp,
                    format!("{desc} has no storage size"),
                    "add `storage: \"1Gi\"`",
                );
                None
            }
        };
        let access_modes = cf
            .take("access")
            .map(|a| lw.str_list(a, &format!("{desc} › access")))
            .unwrap_or_default();
        let storage_class = cf
            .take("class")
            .and_then(|c| lw.str(c, format!("{desc} › class")));
        cf.finish(lw, &["storage", "access", "class"]);
        if let Some(storage) = storage {
            out.push(ClaimTemplate {
                name,
                storage,
                access_modes,
                storage_class,
            });
        }
    }
    out
}

/// A workload's map of text (`labels:`, `pod_labels:`, `node_selector:`, …): written out, or a Rust
/// expression giving pairs, assigned to the field when `app()` runs and checked then by the same rules.
fn text_map(lw: &mut Lower, v: &Value, owner: &str, workload: &str, field: &'static str) -> Labels {
    let desc = format!("{owner} › {field}");
    if let Value::Expr(e, sp) = v {
        let at = lw.loc(*sp, desc);
        let place = super::Place {
            workload: workload.to_string(),
            container: None,
            field,
        };
        lw.dynamic(at, super::DynamicKind::Pairs(e.clone(), place));
        return Labels::new();
    }
    lw.labels(v, &desc)
}
