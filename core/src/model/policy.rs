//! Autoscalers, disruption budgets, ServiceAccounts and RBAC.

use super::{Block, Labels};
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// A HorizontalPodAutoscaler (autoscaling/v2) for a Deployment or StatefulSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Autoscaler {
    /// Its name.
    pub name: Name,
    /// The workload it scales.
    pub scales: Name,
    /// Minimum replicas.
    pub min: Spanned<i64>,
    /// Maximum replicas.
    pub max: Spanned<i64>,
    /// Target average CPU utilization, percent.
    pub cpu_percent: Option<Spanned<i64>>,
    /// Target average memory utilization, percent.
    pub memory_percent: Option<Spanned<i64>>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: HorizontalPodAutoscalerSpec (autoscaling/v2) fields, merged under the DSL's.
    pub spec: Block,
}

/// A PodDisruptionBudget for a workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DisruptionBudget {
    /// Its name.
    pub name: Name,
    /// The workload it protects.
    pub protects: Name,
    /// `minAvailable` (a number or a percentage).
    pub min_available: Option<Spanned<String>>,
    /// `maxUnavailable` (a number or a percentage).
    pub max_unavailable: Option<Spanned<String>>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: PodDisruptionBudgetSpec fields, merged under the DSL's.
    pub spec: Block,
}

/// A ServiceAccount.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceAccountDecl {
    /// Its name.
    pub name: Name,
    /// Mount the API token into pods (Kubernetes' default is true).
    pub automount_token: Option<bool>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: top-level ServiceAccount fields (`imagePullSecrets`, `secrets`), merged under the DSL's.
    pub spec: Block,
}

/// A Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleDecl {
    /// Its name.
    pub name: Name,
    /// ClusterRole (cluster-wide) rather than Role.
    pub cluster: bool,
    /// Its rules.
    pub rules: Vec<PolicyRule>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
}

/// One RBAC rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyRule {
    /// API groups (`""` is core).
    pub api_groups: Vec<Spanned<String>>,
    /// Resources.
    pub resources: Vec<Spanned<String>>,
    /// Verbs.
    pub verbs: Vec<Spanned<String>>,
    /// Specific object names.
    pub resource_names: Vec<Spanned<String>>,
}

/// A RoleBinding or ClusterRoleBinding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleBindingDecl {
    /// Its name.
    pub name: Name,
    /// ClusterRoleBinding rather than RoleBinding.
    pub cluster: bool,
    /// The role it grants: a declared role (a `role` for a RoleBinding, or a `cluster_role`), or with
    /// [`RoleBindingDecl::external_cluster_role`] a ClusterRole the app does not declare.
    pub role: Name,
    /// `role: cluster_role("view")`: a ClusterRole someone else makes (Kubernetes' `view`, `edit`,
    /// `admin`, another app's), not checked against the app's roles.
    #[serde(default)]
    pub external_cluster_role: bool,
    /// Who it grants the role to, in the written order.
    pub subjects: Vec<Subject>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
}

/// One subject of a binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Subject {
    /// A ServiceAccount of the app's namespace: declared, `external`, or the operator's.
    Account(Name),
    /// `user("jane@example.com")`: a user the cluster's authentication names.
    User(Spanned<String>),
    /// `group("system:authenticated")`: a group of users.
    Group(Spanned<String>),
    /// `service_account("NAMESPACE", "NAME")`: a ServiceAccount of another namespace.
    ForeignAccount {
        /// Its namespace.
        namespace: Spanned<String>,
        /// Its name.
        name: Spanned<String>,
    },
}

/// RBAC verbs Kubernetes knows.
pub const RBAC_VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "*",
    "use",
    "bind",
    "escalate",
    "impersonate",
    "approve",
    "sign",
];
