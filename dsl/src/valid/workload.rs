//! Lowering workloads: the item read by its key table (`workload_keys.rs`), volumes, claim templates and
//! maps of text (containers: `container_keys.rs`).

use super::container_keys::CONTAINER;
use super::keys::{self, Kinds, Reading};
use super::workload_keys::{WORKLOAD, WorkloadRead};
use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
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
    let mut r = Reading::<WorkloadRead>::new(owner);
    r.item = WorkloadRead {
        w: Workload {
            kind,
            name,
            ..Workload::default()
        },
        name_sp: Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp)),
    };
    keys::read_kind(lw, &mut f, WORKLOAD, &mut r, kind);
    // Only this kind's keys: "accepts:" and did-you-mean never offer `schedule` to a deployment.
    let mut allowed = keys::names(WORKLOAD, Kinds::of(kind));
    allowed.extend(keys::names(CONTAINER, Kinds::ALL));
    f.finish(lw, &allowed);
    lw.app.workloads.push(r.item.w);
}

pub(super) fn volumes(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Volume> {
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

/// The keys of one of a StatefulSet's `volume_claims`.
const CLAIM_KEYS: &[&str] = &["storage", "access", "class"];

pub(super) fn claims(lw: &mut Lower, v: &Value, owner: &str) -> Vec<ClaimTemplate> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › volume_claims"));
    for (k, body) in f.all() {
        let desc = format!("{owner} › volume claim {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut cf = Fields::of(lw, Some(body), desc.clone());
        let storage = match cf.take("storage") {
            Some(s) => lw.text(s, format!("{desc} › storage")),
            None if cf.misspells("storage", |k| CLAIM_KEYS.contains(&k)) => None,
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
        cf.finish(lw, CLAIM_KEYS);
        // Without a size an error was reported (the app is not expanded); the claim is kept, with a size
        // that checks, so that mounts of it and the quantity rules add no follow-on errors.
        let storage = storage.unwrap_or_else(|| Spanned::new("1Gi".to_string(), name.at));
        out.push(ClaimTemplate {
            name,
            storage,
            access_modes,
            storage_class,
        });
    }
    out
}

/// A workload's map of text (`labels:`, `pod_labels:`, `node_selector:`, …): written out, or a Rust
/// expression giving pairs, assigned to the field when `app()` runs and checked then by the same rules.
pub(super) fn text_map(
    lw: &mut Lower,
    v: &Value,
    owner: &str,
    workload: &str,
    field: &'static str,
) -> Labels {
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
