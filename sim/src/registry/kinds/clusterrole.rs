//! ClusterRole (rbac.authorization.k8s.io/v1): printed as Roles are.

use crate::registry::strategy::Strategy;
use crate::registry::table::Printer;
use crate::registry::validate::NameRule;

pub struct ClusterRole;

impl Strategy for ClusterRole {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> Option<Printer> {
        super::role::Role.printer()
    }
}
