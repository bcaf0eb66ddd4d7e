//! Role (rbac.authorization.k8s.io/v1): the columns `kubectl get roles` prints (ClusterRoles print
//! the same).

use serde_json::json;

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::s;
use crate::registry::table::{Col, Printer};
use crate::registry::validate::NameRule;

pub struct Role;

impl Strategy for Role {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Created At", "date", 0)],
            cells: |o| vec![json!(s(o, "/metadata/creationTimestamp"))],
        })
    }
}
