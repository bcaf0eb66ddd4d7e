//! RoleBinding (rbac.authorization.k8s.io/v1): the role and (wide) subjects `kubectl get` prints
//! (ClusterRoleBindings print the same).

use serde_json::{Value, json};

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, s};
use crate::registry::table::{Col, Printer};
use crate::registry::validate::NameRule;

pub struct RoleBinding;

impl Strategy for RoleBinding {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Role", "string", 0),
                Col("Age", "string", 0),
                Col("Users", "string", 1),
                Col("Groups", "string", 1),
                Col("ServiceAccounts", "string", 1),
            ],
            cells,
        })
    }
}

fn cells(o: &Value) -> Vec<Value> {
    let subjects = o
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let of = |kind: &str| {
        subjects
            .iter()
            .filter(|x| x["kind"] == kind)
            .map(|x| match kind {
                "ServiceAccount" => format!("{}/{}", s(x, "/namespace"), s(x, "/name")),
                _ => s(x, "/name"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        json!(format!(
            "{}/{}",
            s(o, "/roleRef/kind"),
            s(o, "/roleRef/name")
        )),
        json!(age(o)),
        json!(of("User")),
        json!(of("Group")),
        json!(of("ServiceAccount")),
    ]
}
