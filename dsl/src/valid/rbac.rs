//! Lowering ServiceAccounts, Roles and RoleBindings (and their cluster forms), each read by its key table.

use super::blocks::SERVICE_ACCOUNT_OWNED;
use super::keys::{self, Key, Reading, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

/// `service_account NAME { … }`: its keys and their readers.
pub const SERVICE_ACCOUNT: &[Key<Reading<Account>>] = &[
    Key::new(
        "automount",
        "whether pods mount its token (`automountServiceAccountToken`)",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.automount = lw.bool(v);
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of the ServiceAccount's own top-level fields (`imagePullSecrets`, …)",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::SERVICE_ACCOUNT;
                r.item.spec = lw.block_of(v, f, key, root, SERVICE_ACCOUNT_OWNED, &r.owner);
            }
        }),
    ),
];

/// A ServiceAccount's own fields, as read.
#[derive(Default)]
pub struct Account {
    automount: Option<bool>,
    spec: Block,
}

pub(super) fn service_account(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("service_account {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Account>::new(owner);
    keys::read(lw, &mut f, SERVICE_ACCOUNT, &mut r);
    f.finish_keys(lw, SERVICE_ACCOUNT);
    lw.app.service_accounts.push(ServiceAccountDecl {
        name,
        automount_token: r.item.automount,
        labels: r.labels,
        annotations: r.annotations,
        spec: r.item.spec,
    });
}

/// `role` / `cluster_role NAME { … }`: its keys and their readers.
pub const ROLE: &[Key<Reading<Vec<PolicyRule>>>] = &[
    Key::new(
        "rules",
        "`[rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\"], names: [..])]`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item = rules(lw, v, &r.owner);
            }
        }),
    ),
    labels(),
    annotations(),
];

fn rules(lw: &mut Lower, v: &Value, owner: &str) -> Vec<PolicyRule> {
    let items: Vec<&Value> = match v {
        Value::List(items, _) => items.iter().collect(),
        other => vec![other],
    };
    let mut rules = Vec::new();
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
    rules
}

pub(super) fn role(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let cluster = item.keyword.text == "cluster_role";
    let owner = format!("{} {}", item.keyword.text, name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Vec<PolicyRule>>::new(owner);
    keys::read(lw, &mut f, ROLE, &mut r);
    f.finish_keys(lw, ROLE);
    lw.app.roles.push(RoleDecl {
        name,
        cluster,
        rules: r.item,
        labels: r.labels,
        annotations: r.annotations,
    });
}

/// `role_binding` / `cluster_role_binding NAME { … }`: its keys and their readers.
pub const ROLE_BINDING: &[Key<Reading<Binding>>] = &[
    Key::new(
        "role",
        "the declared role it grants, or `cluster_role(\"view\")`: a ClusterRole someone else makes",
        Some(role_of_binding),
    ),
    Key::new(
        "subjects",
        "who it grants it to: declared or `external` ServiceAccounts by name, `user(\"…\")`, `group(\"…\")`, `service_account(\"NAMESPACE\", \"NAME\")`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.subjects = subjects(lw, v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    labels(),
    annotations(),
];

/// A role binding's own fields, as read.
#[derive(Default)]
pub struct Binding {
    /// The item's name, where a missing role is reported.
    sp: Option<Sp>,
    role: Option<Spanned<String>>,
    external_cluster_role: bool,
    subjects: Vec<Subject>,
}

/// `role:`, required: a declared role, or `cluster_role("…")`.
fn role_of_binding(
    lw: &mut Lower,
    r: &mut Reading<Binding>,
    _: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let owner = &r.owner;
    r.item.role = match v {
        Some(v @ Value::Call(_)) => {
            let example = "cluster_role(\"view\")";
            r.item.external_cluster_role = true;
            lw.call(v, &["cluster_role"], example).and_then(|c| {
                let arg = lw.arg(c, 0, "the ClusterRole's name", example);
                lw.max_args(c, 1, example);
                lw.str(arg?, format!("{owner} › {key}"))
            })
        }
        Some(v) => lw.name(v, format!("{owner} › {key}")),
        None => {
            if let Some(sp) = r.item.sp {
                lw.fail(
                    Code::MissingKey,
                    sp,
                    format!("{owner} has no role"),
                    "add `role: NAME`",
                );
            }
            None
        }
    };
}

pub(super) fn role_binding(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let cluster = item.keyword.text == "cluster_role_binding";
    let owner = format!("{} {}", item.keyword.text, name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Binding>::new(owner);
    r.item.sp = Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp));
    keys::read(lw, &mut f, ROLE_BINDING, &mut r);
    f.finish_keys(lw, ROLE_BINDING);
    let b = r.item;
    if let Some(role) = b.role {
        lw.app.role_bindings.push(RoleBindingDecl {
            name,
            cluster,
            role,
            external_cluster_role: b.external_cluster_role,
            subjects: b.subjects,
            labels: r.labels,
            annotations: r.annotations,
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
