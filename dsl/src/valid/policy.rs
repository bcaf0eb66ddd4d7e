//! Lowering autoscalers, disruption budgets, ServiceAccounts and RBAC.

use super::blocks::{AUTOSCALER_OWNED, BUDGET_OWNED, SERVICE_ACCOUNT_OWNED};
use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;

pub(super) fn autoscaler(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("autoscaler {}", name.v);
    let Some(scales) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let sp = item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp);
    let required = |lw: &mut Lower, f: &mut Fields, key: &str| match f.take(key) {
        Some(v) => lw.int(v, format!("{owner} › {key}")),
        None => {
            lw.fail(
                Code::MissingKey,
                sp,
                format!("{owner} has no `{key}`"),
                format!("add `{key}: N`"),
            );
            None
        }
    };
    let min = required(lw, &mut f, "min");
    let max = required(lw, &mut f, "max");
    let cpu_percent = f
        .take("cpu")
        .and_then(|v| lw.int(v, format!("{owner} › cpu")));
    let memory_percent = f
        .take("memory")
        .and_then(|v| lw.int(v, format!("{owner} › memory")));
    let (labels, annotations) = lw.meta(&mut f, &owner);
    let spec = lw.block(
        &mut f,
        "spec",
        schema::HORIZONTAL_POD_AUTOSCALER_SPEC,
        AUTOSCALER_OWNED,
        &owner,
    );
    f.finish_keys(lw, super::keys::AUTOSCALER);
    if let (Some(min), Some(max)) = (min, max) {
        lw.app.autoscalers.push(Autoscaler {
            name,
            scales,
            min,
            max,
            cpu_percent,
            memory_percent,
            labels,
            annotations,
            spec,
        });
    }
}

pub(super) fn disruption_budget(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("disruption_budget {}", name.v);
    let Some(protects) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let min_available = f
        .take("min_available")
        .and_then(|v| lw.text(v, format!("{owner} › min_available")));
    let max_unavailable = f
        .take("max_unavailable")
        .and_then(|v| lw.text(v, format!("{owner} › max_unavailable")));
    let (labels, annotations) = lw.meta(&mut f, &owner);
    let spec = lw.block(
        &mut f,
        "spec",
        schema::POD_DISRUPTION_BUDGET_SPEC,
        BUDGET_OWNED,
        &owner,
    );
    f.finish_keys(lw, super::keys::DISRUPTION_BUDGET);
    lw.app.disruption_budgets.push(DisruptionBudget {
        name,
        protects,
        min_available,
        max_unavailable,
        labels,
        annotations,
        spec,
    });
}

pub(super) fn service_account(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("service_account {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let automount_token = f.take("automount").and_then(|v| lw.bool(v));
    let (labels, annotations) = lw.meta(&mut f, &owner);
    let spec = lw.block(
        &mut f,
        "spec",
        schema::SERVICE_ACCOUNT,
        SERVICE_ACCOUNT_OWNED,
        &owner,
    );
    f.finish_keys(lw, super::keys::SERVICE_ACCOUNT);
    lw.app.service_accounts.push(ServiceAccountDecl {
        name,
        automount_token,
        labels,
        annotations,
        spec,
    });
}

pub(super) fn role(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let cluster = item.keyword.text == "cluster_role";
    let owner = format!("{} {}", item.keyword.text, name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut rules = Vec::new();
    if let Some(v) = f.take("rules") {
        let items: Vec<&Value> = match v {
            Value::List(items, _) => items.iter().collect(),
            other => vec![other],
        };
        for i in items {
            let example = "rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\"])";
            let Some(call) = lw.call(i, &["rule"], example) else {
                continue;
            };
            let desc = format!("{owner} › rule");
            let mut nf = lw.named(call, &desc);
            let mut list = |lw: &mut Lower, key: &str| {
                nf.take(key)
                    .map(|v| lw.str_list(v, &format!("{desc} › {key}")))
                    .unwrap_or_default()
            };
            let rule = PolicyRule {
                api_groups: list(lw, "groups"),
                resources: list(lw, "resources"),
                verbs: list(lw, "verbs"),
                resource_names: list(lw, "names"),
            };
            nf.finish(lw, &["groups", "resources", "verbs", "names"]);
            lw.max_args(call, 0, example);
            rules.push(rule);
        }
    }
    let (labels, annotations) = lw.meta(&mut f, &owner);
    f.finish_keys(lw, super::keys::ROLE);
    lw.app.roles.push(RoleDecl {
        name,
        cluster,
        rules,
        labels,
        annotations,
    });
}

pub(super) fn role_binding(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let cluster = item.keyword.text == "cluster_role_binding";
    let owner = format!("{} {}", item.keyword.text, name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut external_cluster_role = false;
    let role = match f.take("role") {
        Some(v @ Value::Call(_)) => {
            let example = "cluster_role(\"view\")";
            external_cluster_role = true;
            lw.call(v, &["cluster_role"], example).and_then(|c| {
                let arg = lw.arg(c, 0, "the ClusterRole's name", example);
                lw.max_args(c, 1, example);
                lw.str(arg?, format!("{owner} › role"))
            })
        }
        Some(v) => lw.name(v, format!("{owner} › role")),
        None => {
            lw.fail(
                Code::MissingKey,
                item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
                format!("{owner} has no role"),
                "add `role: NAME`",
            );
            None
        }
    };
    let subjects = f
        .take("subjects")
        .map(|v| subjects(lw, v, &format!("{owner} › subjects")))
        .unwrap_or_default();
    let (labels, annotations) = lw.meta(&mut f, &owner);
    f.finish_keys(lw, super::keys::ROLE_BINDING);
    if let Some(role) = role {
        lw.app.role_bindings.push(RoleBindingDecl {
            name,
            cluster,
            role,
            external_cluster_role,
            subjects,
            labels,
            annotations,
        });
    }
}

/// `[web, user("jane@example.com"), group("devs"), service_account("ci", "deployer")]`: declared
/// ServiceAccounts by name, the rest by call.
fn subjects(lw: &mut Lower, v: &Value, desc: &str) -> Vec<Subject> {
    let one = |lw: &mut Lower, v: &Value| -> Option<Subject> {
        let Value::Call(c) = v else {
            return lw.name(v, desc).map(Subject::Account);
        };
        let example = "user(\"jane@example.com\")";
        let call = lw.call(v, &["user", "group", "service_account"], example)?;
        if call.name.text == "service_account" {
            let example = "service_account(\"NAMESPACE\", \"NAME\")";
            let namespace = lw.arg(c, 0, "the ServiceAccount's namespace", example);
            let name = lw.arg(c, 1, "the ServiceAccount's name", example);
            lw.max_args(c, 2, example);
            let namespace = lw.str(namespace?, format!("{desc} › service_account namespace"))?;
            let name = lw.str(name?, format!("{desc} › service_account name"))?;
            return Some(Subject::ForeignAccount { namespace, name });
        }
        let arg = lw.arg(c, 0, "the name", example);
        lw.max_args(c, 1, example);
        let who = lw.str(arg?, format!("{desc} › {}", call.name.text))?;
        Some(match call.name.text.as_str() {
            "user" => Subject::User(who),
            _ => Subject::Group(who),
        })
    };
    match v {
        Value::List(items, _) => items.iter().filter_map(|i| one(lw, i)).collect(),
        _ => one(lw, v).into_iter().collect(),
    }
}
