//! First-class shortcuts for the API fields real manifests set most: `grace:`, `priority:`,
//! `pull_secrets:`, `strategy:` (lowered into the workload's `pod:`/`spec:` blocks, so they are checked and
//! merged like them), `security: restricted` and `spread:` (rendered from the model).

use super::Lower;
use crate::ast::{NameTok, Value};
use piceli_core::Code;
use piceli_core::model::{Block, BlockValue, Workload, WorkloadKind};
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::Spanned;

/// `grace: 30` or `grace: "1m"`: `terminationGracePeriodSeconds` in the pod block.
pub(super) fn grace(lw: &mut Lower, w: &mut Workload, k: &NameTok, v: &Value, owner: &str) {
    let desc = format!("{owner} › grace");
    let seconds = match v {
        Value::Str(s) => match piceli_core::rules::duration(&s.value()) {
            Ok(d) if d.subsec_nanos() == 0 => {
                Some(Spanned::new(d.as_secs() as i64, lw.loc(v.sp(), desc)))
            }
            Ok(_) => {
                lw.fail(
                    Code::InvalidValue,
                    v.sp(),
                    "`grace` counts whole seconds",
                    "write e.g. `grace: 30` or `grace: \"30s\"`",
                );
                None
            }
            Err(e) => {
                lw.fail(Code::InvalidValue, v.sp(), e.message, e.help);
                None
            }
        },
        _ => lw.int(v, desc),
    };
    if let Some(s) = seconds {
        push(
            lw,
            &mut w.pod,
            k,
            "terminationGracePeriodSeconds",
            BlockValue::Int(s),
        );
    }
}

/// `priority: "high"`: `priorityClassName` in the pod block.
pub(super) fn priority(lw: &mut Lower, w: &mut Workload, k: &NameTok, v: &Value, owner: &str) {
    if let Some(s) = lw.str(v, format!("{owner} › priority")) {
        push(lw, &mut w.pod, k, "priorityClassName", BlockValue::Str(s));
    }
}

/// `pull_secrets: [regcred]`: `imagePullSecrets` in the pod block.
pub(super) fn pull_secrets(lw: &mut Lower, w: &mut Workload, k: &NameTok, v: &Value, owner: &str) {
    let desc = format!("{owner} › pull_secrets");
    let names = lw.name_list(v, &desc);
    let at = lw.loc(v.sp(), desc.clone());
    let items = names
        .into_iter()
        .map(|n| {
            let key = Spanned::new("name".to_string(), n.at);
            BlockValue::Map(Block::new(n.at, vec![(key, BlockValue::Str(n))]))
        })
        .collect();
    push(
        lw,
        &mut w.pod,
        k,
        "imagePullSecrets",
        BlockValue::List(at, items),
    );
}

/// `security: restricted`.
pub(super) fn security(lw: &mut Lower, w: &mut Workload, v: &Value, owner: &str) {
    w.security = one_of(lw, v, &["restricted"], &format!("{owner} › security"));
}

/// `spread: zones | hosts | [zones, hosts]`.
pub(super) fn spread(lw: &mut Lower, w: &mut Workload, v: &Value, owner: &str) {
    let items: Vec<&Value> = match v {
        Value::List(items, _) => items.iter().collect(),
        other => vec![other],
    };
    for i in items {
        w.spread.extend(one_of(
            lw,
            i,
            &["zones", "hosts"],
            &format!("{owner} › spread"),
        ));
    }
}

/// `rolling`, `rolling(max_surge: 1, max_unavailable: 0)`, `recreate` (Deployment) or `on_delete`
/// (StatefulSet, DaemonSet), into `spec.strategy` / `spec.updateStrategy`.
pub(super) fn strategy(lw: &mut Lower, w: &mut Workload, k: &NameTok, v: &Value, owner: &str) {
    let desc = format!("{owner} › strategy");
    let (field, other) = match w.kind {
        WorkloadKind::Deployment => ("strategy", "recreate"),
        WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => ("updateStrategy", "on_delete"),
        _ => {
            lw.fail(
                Code::UnknownKey,
                k.sp,
                format!("`strategy` does not apply to a {}", w.kind.keyword()),
                "remove it: `strategy` applies to deployment, stateful_set, daemon_set",
            );
            return;
        }
    };
    let (name, call) = match v {
        Value::Path(p) if p.len() == 1 => (&p[0], None),
        Value::Call(c) => (&c.name, Some(c)),
        _ => {
            lw.wrong_type(
                v,
                &format!("`rolling(…)` or `{other}`"),
                "rolling(max_unavailable: 0)",
            );
            return;
        }
    };
    let allowed = ["rolling", other];
    if !allowed.contains(&name.text.as_str()) {
        let help = match did_you_mean(&name.text, allowed) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("use `rolling(…)` or `{other}`"),
        };
        lw.fail(
            Code::InvalidValue,
            name.sp,
            format!("`{}` is not a {} strategy", name.text, w.kind.keyword()),
            help,
        );
        return;
    }
    let type_at = lw.loc(name.sp, format!("{desc} › type"));
    let type_name = match name.text.as_str() {
        "rolling" => "RollingUpdate",
        "recreate" => "Recreate",
        _ => "OnDelete",
    };
    let mut entries = vec![(
        Spanned::new("type".to_string(), type_at),
        BlockValue::Str(Spanned::new(type_name.to_string(), type_at)),
    )];
    if let Some(c) = call {
        lw.max_args(c, 0, "rolling(max_surge: 1, max_unavailable: 0)");
        let mut nf = lw.named(c, &desc);
        let mut rolling = Vec::new();
        let keys: &[(&str, &str)] = match w.kind {
            WorkloadKind::Deployment => &[
                ("max_surge", "maxSurge"),
                ("max_unavailable", "maxUnavailable"),
            ],
            WorkloadKind::StatefulSet => &[
                ("max_unavailable", "maxUnavailable"),
                ("partition", "partition"),
            ],
            _ => &[
                ("max_surge", "maxSurge"),
                ("max_unavailable", "maxUnavailable"),
            ],
        };
        let keys = if c.name.text == "rolling" { keys } else { &[] };
        for (dsl, api) in keys {
            let Some(x) = nf.take(dsl) else { continue };
            let d = format!("{desc} › {dsl}");
            let value = match x {
                Value::Int(n, sp) => Some(BlockValue::Int(Spanned::new(*n, lw.loc(*sp, d)))),
                _ if *api == "partition" => lw.int(x, d).map(BlockValue::Int),
                _ => lw.str(x, d).map(BlockValue::Str),
            };
            if let Some(value) = value {
                rolling.push((Spanned::new(api.to_string(), value.at()), value));
            }
        }
        let allowed: Vec<&str> = keys.iter().map(|(d, _)| *d).collect();
        nf.finish(lw, &allowed);
        if !rolling.is_empty() {
            entries.push((
                Spanned::new("rollingUpdate".to_string(), type_at),
                BlockValue::Map(Block::new(type_at, rolling)),
            ));
        }
    }
    let at = lw.loc(v.sp(), desc);
    push(
        lw,
        &mut w.spec,
        k,
        field,
        BlockValue::Map(Block::new(at, entries)),
    );
}

/// A name from a fixed set (`restricted`, `zones`).
fn one_of(lw: &mut Lower, v: &Value, allowed: &[&str], desc: &str) -> Option<Spanned<String>> {
    let name = lw.name(v, desc.to_string())?;
    if allowed.contains(&name.v.as_str()) {
        return Some(name);
    }
    let help = match did_you_mean(&name.v, allowed.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "use {}",
            allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    };
    lw.fail(
        Code::InvalidValue,
        v.sp(),
        format!("`{}` is not one of the values of {desc}", name.v),
        help,
    );
    None
}

/// Add a shortcut's field to a block (the block's own entry for it was refused as PCL0049).
fn push(lw: &mut Lower, block: &mut Block, key: &NameTok, field: &str, value: BlockValue) {
    if block.is_empty() {
        block.at = lw.loc(key.sp, format!("{field} (from `{}`)", key.text));
    }
    block
        .entries_mut()
        .push((Spanned::new(field.to_string(), value.at()), value));
}
