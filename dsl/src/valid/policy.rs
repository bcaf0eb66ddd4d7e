//! Lowering autoscalers, disruption budgets, ServiceAccounts and RBAC.

use super::blocks::{AUTOSCALER_OWNED, BUDGET_OWNED, SERVICE_ACCOUNT_OWNED};
use super::keys::{self, Key, Meta, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

/// `autoscaler NAME -> WORKLOAD { … }`: its keys and their readers.
pub const AUTOSCALER: &[Key<Scaling>] = &[
    Key::new("min", "the fewest replicas (at least 1)", Some(replicas)),
    Key::new("max", "the most replicas", Some(replicas)),
    Key::new(
        "cpu",
        "target average CPU utilisation, in percent",
        Some(percent),
    ),
    Key::new(
        "memory",
        "target average memory utilisation, in percent",
        Some(percent),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of HorizontalPodAutoscalerSpec (autoscaling/v2) fields",
        Some(|lw, a, f, key, v| {
            if let Some(v) = v {
                let root = schema::HORIZONTAL_POD_AUTOSCALER_SPEC;
                a.spec = lw.block_of(v, f, key, root, AUTOSCALER_OWNED, &a.owner);
            }
        }),
    ),
];

/// An autoscaler being read.
#[derive(Default)]
pub struct Scaling {
    owner: String,
    /// The item's name, where a missing required key is reported.
    sp: Option<Sp>,
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    cpu: Option<Spanned<i64>>,
    memory: Option<Spanned<i64>>,
    labels: Labels,
    annotations: Labels,
    spec: Block,
}

/// `min:` and `max:`, both required.
fn replicas(lw: &mut Lower, a: &mut Scaling, _: &Fields, key: &'static str, v: Option<&Value>) {
    let n = match v {
        Some(v) => lw.int(v, format!("{} › {key}", a.owner)),
        None => {
            if let Some(sp) = a.sp {
                lw.fail(
                    Code::MissingKey,
                    sp,
                    format!("{} has no `{key}`", a.owner),
                    format!("add `{key}: N`"),
                );
            }
            None
        }
    };
    *if key == "min" { &mut a.min } else { &mut a.max } = n;
}

/// `cpu:` and `memory:`.
fn percent(lw: &mut Lower, a: &mut Scaling, _: &Fields, key: &'static str, v: Option<&Value>) {
    if let Some(v) = v {
        let n = lw.int(v, format!("{} › {key}", a.owner));
        *if key == "cpu" {
            &mut a.cpu
        } else {
            &mut a.memory
        } = n;
    }
}

impl Meta for Scaling {
    fn owner(&self) -> &str {
        &self.owner
    }
    fn meta(&mut self, annotations: bool) -> &mut Labels {
        if annotations {
            &mut self.annotations
        } else {
            &mut self.labels
        }
    }
}

pub(super) fn autoscaler(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("autoscaler {}", name.v);
    let Some(scales) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut a = Scaling {
        owner,
        sp: Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp)),
        ..Scaling::default()
    };
    keys::read(lw, &mut f, AUTOSCALER, &mut a);
    f.finish_keys(lw, AUTOSCALER);
    if let (Some(min), Some(max)) = (a.min, a.max) {
        lw.app.autoscalers.push(Autoscaler {
            name,
            scales,
            min,
            max,
            cpu_percent: a.cpu,
            memory_percent: a.memory,
            labels: a.labels,
            annotations: a.annotations,
            spec: a.spec,
        });
    }
}

/// `disruption_budget NAME -> WORKLOAD { … }`: its keys and their readers.
pub const DISRUPTION_BUDGET: &[Key<Budget>] = &[
    Key::new(
        "min_available",
        "pods that must stay up: a number or a percentage",
        Some(|lw, b, _, key, v| {
            if let Some(v) = v {
                b.min_available = lw.text(v, format!("{} › {key}", b.owner));
            }
        }),
    ),
    Key::new(
        "max_unavailable",
        "pods that may be down: a number or a percentage",
        Some(|lw, b, _, key, v| {
            if let Some(v) = v {
                b.max_unavailable = lw.text(v, format!("{} › {key}", b.owner));
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of PodDisruptionBudgetSpec fields",
        Some(|lw, b, f, key, v| {
            if let Some(v) = v {
                let root = schema::POD_DISRUPTION_BUDGET_SPEC;
                b.spec = lw.block_of(v, f, key, root, BUDGET_OWNED, &b.owner);
            }
        }),
    ),
];

/// A disruption budget being read.
#[derive(Default)]
pub struct Budget {
    owner: String,
    min_available: Option<Spanned<String>>,
    max_unavailable: Option<Spanned<String>>,
    labels: Labels,
    annotations: Labels,
    spec: Block,
}

impl Meta for Budget {
    fn owner(&self) -> &str {
        &self.owner
    }
    fn meta(&mut self, annotations: bool) -> &mut Labels {
        if annotations {
            &mut self.annotations
        } else {
            &mut self.labels
        }
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
    let mut b = Budget {
        owner,
        ..Budget::default()
    };
    keys::read(lw, &mut f, DISRUPTION_BUDGET, &mut b);
    f.finish_keys(lw, DISRUPTION_BUDGET);
    lw.app.disruption_budgets.push(DisruptionBudget {
        name,
        protects,
        min_available: b.min_available,
        max_unavailable: b.max_unavailable,
        labels: b.labels,
        annotations: b.annotations,
        spec: b.spec,
    });
}

/// `service_account NAME { … }`: its keys and their readers.
pub const SERVICE_ACCOUNT: &[Key<Account>] = &[
    Key::new(
        "automount",
        "whether pods mount its token (`automountServiceAccountToken`)",
        Some(|lw, s, _, _, v| {
            if let Some(v) = v {
                s.automount = lw.bool(v);
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of the ServiceAccount's own top-level fields (`imagePullSecrets`, …)",
        Some(|lw, s, f, key, v| {
            if let Some(v) = v {
                let root = schema::SERVICE_ACCOUNT;
                s.spec = lw.block_of(v, f, key, root, SERVICE_ACCOUNT_OWNED, &s.owner);
            }
        }),
    ),
];

/// A ServiceAccount being read.
#[derive(Default)]
pub struct Account {
    owner: String,
    automount: Option<bool>,
    labels: Labels,
    annotations: Labels,
    spec: Block,
}

impl Meta for Account {
    fn owner(&self) -> &str {
        &self.owner
    }
    fn meta(&mut self, annotations: bool) -> &mut Labels {
        if annotations {
            &mut self.annotations
        } else {
            &mut self.labels
        }
    }
}

pub(super) fn service_account(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("service_account {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut s = Account {
        owner,
        ..Account::default()
    };
    keys::read(lw, &mut f, SERVICE_ACCOUNT, &mut s);
    f.finish_keys(lw, SERVICE_ACCOUNT);
    lw.app.service_accounts.push(ServiceAccountDecl {
        name,
        automount_token: s.automount,
        labels: s.labels,
        annotations: s.annotations,
        spec: s.spec,
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
