//! Targets and their overrides: names that exist, fields that exist, and values that pass the same rules.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, Cluster, OVERRIDE_FIELDS, OverrideValue};
use crate::overrides::for_target;
use crate::rules;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for t in &app.targets {
        if let Cluster::Kubeconfig { path, context } = &t.cluster {
            for (v, what) in [(path, "kubeconfig path"), (context, "context")] {
                if v.v.trim().is_empty() {
                    cx.error(
                        Code::MissingKey,
                        v.at,
                        format!("the {what} is empty"),
                        format!("give the {what}"),
                    );
                }
            }
        }
        for o in &t.overrides {
            if app.included_workload(&o.object.v).is_some() {
                cx.error(
                    Code::UnknownOverride,
                    o.object.at,
                    format!("`{}` comes from an included file", o.object.v),
                    "target overrides change workloads the app declares; change the included file, or declare the workload in `app!`",
                );
                continue;
            }
            let Some(w) = app.workload(&o.object.v) else {
                cx.unknown(
                    Code::UnknownOverride,
                    "workload",
                    &o.object,
                    app.workloads.iter().map(|w| w.name.v.as_str()),
                );
                continue;
            };
            let field = o.field.v.as_str();
            let known = OVERRIDE_FIELDS.contains(&field)
                || field
                    .strip_prefix("env.")
                    .is_some_and(|n| !n.is_empty() && !n.contains('.'));
            if !known {
                let help = match rules::did_you_mean(
                    field,
                    OVERRIDE_FIELDS.iter().copied().chain(["env.NAME"]),
                ) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "overridable fields: {}, env.NAME",
                        super::list(OVERRIDE_FIELDS)
                    ),
                };
                cx.error(
                    Code::UnknownOverride,
                    o.field.at,
                    format!("`{field}` cannot be overridden"),
                    help,
                );
                continue;
            }
            let wants_int = field == "replicas";
            match (&o.value, wants_int) {
                (OverrideValue::Int(_), true) | (OverrideValue::Str(_), false) => {}
                (OverrideValue::Str(s), true) => cx.error(
                    Code::WrongType,
                    s.at,
                    "replicas is a number",
                    "write it without quotes, e.g. `3`",
                ),
                (OverrideValue::Int(n), false) => cx.error(
                    Code::WrongType,
                    n.at,
                    format!("`{field}` is a string"),
                    format!("write it in quotes, e.g. `\"{}\"`", n.v),
                ),
            }
            if field == "replicas" && !w.kind.scalable() {
                cx.error(
                    Code::UnknownOverride,
                    o.field.at,
                    format!(
                        "`{}` is a {}, which has no replicas",
                        w.name.v,
                        w.kind.kind()
                    ),
                    "override replicas of a deployment or stateful_set only",
                );
            }
        }
        // The overridden app must pass the same rules (an override's value is spanned at the override).
        if !t.overrides.is_empty() {
            let overridden = for_target(app, &t.name.v);
            super::pods::check(cx, &overridden);
        }
    }
}
