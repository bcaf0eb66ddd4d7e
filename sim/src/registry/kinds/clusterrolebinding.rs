//! ClusterRoleBinding (rbac.authorization.k8s.io/v1): printed as RoleBindings are.

use crate::registry::strategy::Strategy;
use crate::registry::table::Printer;
use crate::registry::validate::NameRule;

pub struct ClusterRoleBinding;

impl Strategy for ClusterRoleBinding {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> Option<Printer> {
        super::rolebinding::RoleBinding.printer()
    }
}
