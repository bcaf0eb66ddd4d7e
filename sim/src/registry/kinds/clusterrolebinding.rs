//! ClusterRoleBinding (rbac.authorization.k8s.io/v1): printed as RoleBindings are.

use crate::registry::strategy::Strategy;
use crate::registry::table::Printer;

pub struct ClusterRoleBinding;

impl Strategy for ClusterRoleBinding {
    fn printer(&self) -> Option<Printer> {
        super::rolebinding::RoleBinding.printer()
    }
}
