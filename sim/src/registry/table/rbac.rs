//! Table printers of the RBAC kinds, as kube-apiserver 1.33 prints them: Roles and ClusterRoles with
//! their creation time, bindings with their role and (wide) subjects.

use serde_json::{Value, json};

use super::cells::{age, s};
use super::{Col, Printer};

/// The printer of an RBAC kind.
pub fn printer(kind: &str) -> Option<Printer> {
    Some(match kind {
        "Role" | "ClusterRole" => Printer {
            columns: &[Col("Name", "string", 0), Col("Created At", "date", 0)],
            cells: |o| vec![json!(s(o, "/metadata/creationTimestamp"))],
        },
        "RoleBinding" | "ClusterRoleBinding" => Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Role", "string", 0),
                Col("Age", "string", 0),
                Col("Users", "string", 1),
                Col("Groups", "string", 1),
                Col("ServiceAccounts", "string", 1),
            ],
            cells: binding,
        },
        _ => return None,
    })
}

fn binding(o: &Value) -> Vec<Value> {
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
