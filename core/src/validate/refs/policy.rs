//! References of autoscalers, disruption budgets and RBAC: what they scale, protect and bind.

use super::workload;
use crate::codes::Code;
use crate::model::{App, ExternalKind, Subject};
use crate::rules;
use crate::validate::Ctx;
use crate::validate::pods::one_of;

pub(super) fn scaling(cx: &mut Ctx, app: &App) {
    for a in &app.autoscalers {
        if let Some(w) = workload(cx, app, &a.scales)
            && !w.kind.scalable()
        {
            cx.error(
                Code::NotScalable,
                a.scales.at,
                format!(
                    "`{}` is a {}, which cannot be autoscaled",
                    w.name.v,
                    w.kind.kind()
                ),
                "autoscale a deployment or stateful_set",
            );
        }
        let (min, max) = (cx.known(&a.min).copied(), cx.known(&a.max).copied());
        if let Some(m) = min
            && m < 1
        {
            cx.error(
                Code::BadBounds,
                a.min.at,
                format!("min is {m}"),
                "an autoscaler's min is at least 1",
            );
        }
        if let (Some(lo), Some(hi)) = (min, max)
            && hi < lo
        {
            cx.error(
                Code::BadBounds,
                a.max.at,
                format!("max {hi} is below min {lo}"),
                format!("set max to at least {lo}"),
            );
        }
        for p in [&a.cpu_percent, &a.memory_percent].into_iter().flatten() {
            if let Some(&v) = cx.known(p)
                && v < 1
            {
                cx.error(
                    Code::BadBounds,
                    p.at,
                    format!("target utilization {v}%"),
                    "use a percentage above 0, e.g. 70",
                );
            }
        }
        if a.cpu_percent.is_none() && a.memory_percent.is_none() {
            cx.error(
                Code::MissingKey,
                a.name.at,
                format!("autoscaler `{}` has no metric", a.name.v),
                "add `cpu: 70` (target average CPU utilization, percent) or `memory: 80`",
            );
        }
    }
    for d in &app.disruption_budgets {
        let w = workload(cx, app, &d.protects);
        match (&d.min_available, &d.max_unavailable) {
            (Some(_), Some(m)) => cx.error(
                Code::BadBounds,
                m.at,
                "both min_available and max_unavailable are set",
                "set only one of them",
            ),
            (None, None) => cx.error(
                Code::MissingKey,
                d.name.at,
                format!(
                    "disruption budget `{}` sets neither min_available nor max_unavailable",
                    d.name.v
                ),
                "add `min_available: 1` or `max_unavailable: \"25%\"`",
            ),
            _ => {}
        }
        for v in [&d.min_available, &d.max_unavailable].into_iter().flatten() {
            if let Some(text) = cx.known(v) {
                let verdict = rules::percent_or_int(text).map(|_| ());
                cx.rule(Code::BadBounds, v.at, verdict);
            }
        }
        if let (Some(w), Some(min)) = (w, &d.min_available)
            && let Some(Ok(n)) = cx.known(min).map(|t| t.parse::<i64>())
            && let Some(r) = &w.replicas
            && let Some(&replicas) = cx.known(r)
            && n > replicas
            && !app.autoscalers.iter().any(|a| a.scales.v == w.name.v)
        {
            cx.error(
                Code::BadBounds,
                min.at,
                format!(
                    "min_available {n} is above the {replicas} replicas of `{}`",
                    w.name.v
                ),
                "no pod could ever be evicted; lower min_available or raise replicas",
            );
        }
    }
}

pub(super) fn rbac(cx: &mut Ctx, app: &App) {
    let accounts = || {
        let declared = app.service_accounts.iter().map(|s| s.name.v.as_str());
        declared.chain(crate::validate::pods::externals(
            app,
            ExternalKind::ServiceAccount,
        ))
    };
    for w in &app.workloads {
        if let Some(sa) = &w.service_account
            && !accounts().any(|a| a == sa.v)
        {
            cx.unknown(Code::UnknownRole, "service_account", sa, accounts());
        }
    }
    for r in &app.roles {
        for rule in &r.rules {
            for v in &rule.verbs {
                one_of(cx, v, crate::model::RBAC_VERBS, "verb");
            }
            if rule.verbs.is_empty() || rule.resources.is_empty() {
                cx.error(
                    Code::MissingKey,
                    r.name.at,
                    format!("a rule of `{}` has no verbs or no resources", r.name.v),
                    "write `rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\", \"list\"])`",
                );
            }
        }
    }
    for b in &app.role_bindings {
        if b.external_cluster_role {
            if app.roles.iter().any(|r| r.cluster && r.name.v == b.role.v) {
                cx.error(
                    Code::InvalidValue,
                    b.role.at,
                    format!(
                        "cluster_role `{}` is declared by the app, so it is not someone else's",
                        b.role.v
                    ),
                    format!("write `role: {}`", b.role.v),
                );
            } else if b.role.v.is_empty() {
                cx.error(
                    Code::InvalidValue,
                    b.role.at,
                    "the ClusterRole's name is empty",
                    "write the name of an existing ClusterRole, e.g. `role: cluster_role(\"view\")`",
                );
            }
        }
        let role_ok = b.external_cluster_role
            || app
                .roles
                .iter()
                .any(|r| r.name.v == b.role.v && (r.cluster || !b.cluster));
        if !role_ok {
            let candidates = app
                .roles
                .iter()
                .filter(|r| r.cluster || !b.cluster)
                .map(|r| r.name.v.as_str());
            cx.unknown(
                Code::UnknownRole,
                if b.cluster { "cluster_role" } else { "role" },
                &b.role,
                candidates,
            );
        }
        for subject in &b.subjects {
            match subject {
                Subject::Account(s) => {
                    if !accounts().any(|a| a == s.v) {
                        cx.unknown(Code::UnknownRole, "service_account", s, accounts());
                    }
                }
                Subject::User(who) | Subject::Group(who) if who.v.is_empty() => cx.error(
                    Code::InvalidValue,
                    who.at,
                    "the subject's name is empty",
                    "write the name the cluster's authentication gives, e.g. `user(\"jane@example.com\")`",
                ),
                Subject::User(_) | Subject::Group(_) => {}
                Subject::ForeignAccount { namespace, name } => {
                    cx.rule(
                        Code::InvalidValue,
                        namespace.at,
                        rules::names::dns1123_label(&namespace.v),
                    );
                    cx.rule(
                        Code::InvalidValue,
                        name.at,
                        rules::names::dns1123_subdomain(&name.v),
                    );
                }
            }
        }
    }
}
