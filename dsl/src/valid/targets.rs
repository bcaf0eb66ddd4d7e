//! Lowering `target NAME = kubeconfig(…) | local(…) { … }` items: where the app deploys (kubeconfig, context,
//! namespace) and the per-target overrides.

use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::Spanned;

pub(super) fn target(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("target {}", name.v);
    let Some(how) = &item.eq else {
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("{owner} does not say where it deploys"),
            "write `target dev = kubeconfig(\"dev.kubeconfig\", context: \"dev\", namespace: \"hello\");` or `target local = local(namespace: \"hello\");`",
        );
        return;
    };
    let Some(call) = lw.call(
        how,
        &["kubeconfig", "local"],
        "kubeconfig(\"dev.kubeconfig\", context: \"dev\", namespace: \"hello\")",
    ) else {
        return;
    };
    let mut nf = lw.named(call, &owner);
    let namespace = match nf.take("namespace") {
        Some(v) => lw.str(v, format!("{owner} › namespace")),
        None => Some(Spanned::new(
            "default".to_string(),
            lw.loc(call.sp, format!("{owner} › namespace")),
        )),
    };
    let cluster = if call.name.text == "kubeconfig" {
        let path = lw
            .arg(
                call,
                0,
                "the kubeconfig file",
                "kubeconfig(\"dev.kubeconfig\", context: \"dev\")",
            )
            .and_then(|p| lw.str(p, format!("{owner} › kubeconfig")));
        let context = match nf.take("context") {
            Some(v) => lw.str(v, format!("{owner} › context")),
            None => {
                lw.fail(
                    Code::MissingKey,
                    call.sp,
                    format!("{owner} names no context"),
                    "add `context: \"NAME\"`: Piceli never uses the current context implicitly",
                );
                None
            }
        };
        lw.max_args(call, 1, "kubeconfig(\"dev.kubeconfig\", context: \"dev\")");
        nf.finish(lw, &["context", "namespace"]);
        match (path, context) {
            (Some(path), Some(context)) => Cluster::Kubeconfig { path, context },
            _ => return,
        }
    } else {
        lw.max_args(call, 0, "local(namespace: \"hello\")");
        nf.finish(lw, &["namespace"]);
        Cluster::Local
    };
    let mut t = Target {
        name,
        cluster,
        namespace: namespace.unwrap_or_default(),
        ..Target::default()
    };
    let mut f = Fields::of(lw, item.body.as_ref(), format!("{owner} › overrides"));
    for (k, v) in f.all() {
        if k.text == "registry" {
            t.registry = lw.str(v, format!("{owner} › registry"));
            continue;
        }
        if k.text == "rollback_on_failed_checks" {
            t.rollback_on_failed_checks = lw.bool(v).unwrap_or(false);
            continue;
        }
        let desc = format!("{owner} › {}", k.text);
        let Some((object, field)) = k.text.split_once('.') else {
            lw.fail(
                Code::UnknownOverride,
                k.sp,
                format!("`{}` is not an override", k.text),
                "write `WORKLOAD.FIELD: value`, e.g. `web.replicas: 3`, or `rollback_on_failed_checks: true`",
            );
            continue;
        };
        let object_sp = k.parts.first().copied().unwrap_or(k.sp);
        let field_sp = match (k.parts.get(1), k.parts.last()) {
            (Some(first), Some(last)) => first.to(*last),
            _ => k.sp,
        };
        let object_at = lw.loc(object_sp, format!("{owner} › {object}"));
        let field_at = lw.loc(field_sp, desc.clone());
        let value = match v {
            Value::Int(..) => lw.int(v, format!("{desc} value")).map(OverrideValue::Int),
            Value::Expr(..) if field == "replicas" => {
                lw.int(v, format!("{desc} value")).map(OverrideValue::Int)
            }
            _ => lw.str(v, format!("{desc} value")).map(OverrideValue::Str),
        };
        let Some(value) = value else { continue };
        t.overrides.push(Override {
            object: Spanned::new(object.to_string(), object_at),
            field: Spanned::new(field.to_string(), field_at),
            value,
        });
    }
    lw.app.targets.push(t);
}
