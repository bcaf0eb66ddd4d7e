//! One [`Strategy`](super::strategy::Strategy) per built-in kind, and the table that finds them.

mod clusterrole;
mod clusterrolebinding;
mod componentstatus;
mod configmap;
mod cronjob;
mod customresourcedefinition;
mod daemonset;
mod deployment;
mod endpoints;
mod event;
mod job;
mod limitrange;
pub(crate) mod namespace;
mod networkpolicy;
mod node;
mod persistentvolumeclaim;
pub(crate) mod pod;
mod podtemplate;
mod replicaset;
mod role;
mod rolebinding;
mod secret;
mod service;
mod serviceaccount;
mod statefulset;
mod storageclass;

use super::strategy::{Generational, Strategy};

/// The strategy of a built-in kind, or `None` for kinds with no rules of their own.
pub fn lookup(group: &str, kind: &str) -> Option<&'static dyn Strategy> {
    let s: &'static dyn Strategy = match (group, kind) {
        ("apps", "Deployment") => &deployment::Deployment,
        ("apps", "ReplicaSet") => &replicaset::ReplicaSet,
        ("apps", "StatefulSet") => &statefulset::StatefulSet,
        ("apps", "DaemonSet") => &daemonset::DaemonSet,
        ("batch", "Job") => &job::Job,
        ("batch", "CronJob") => &cronjob::CronJob,
        ("", "Pod") => &pod::Pod,
        ("", "PodTemplate") => &podtemplate::PodTemplate,
        ("", "ComponentStatus") => &componentstatus::ComponentStatus,
        ("", "LimitRange") => &limitrange::LimitRange,
        ("", "Endpoints") => &endpoints::Endpoints,
        ("", "Service") => &service::Service,
        ("", "Namespace") => &namespace::Namespace,
        ("", "Secret") => &secret::Secret,
        ("", "ConfigMap") => &configmap::ConfigMap,
        ("", "PersistentVolumeClaim") => &persistentvolumeclaim::PersistentVolumeClaim,
        ("", "ServiceAccount") => &serviceaccount::ServiceAccount,
        ("", "Node") => &node::Node,
        ("" | "events.k8s.io", "Event") => &event::Event,
        ("storage.k8s.io", "StorageClass") => &storageclass::StorageClass,
        ("rbac.authorization.k8s.io", "Role") => &role::Role,
        ("rbac.authorization.k8s.io", "ClusterRole") => &clusterrole::ClusterRole,
        ("rbac.authorization.k8s.io", "RoleBinding") => &rolebinding::RoleBinding,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            &clusterrolebinding::ClusterRoleBinding
        }
        ("networking.k8s.io", "NetworkPolicy") => &networkpolicy::NetworkPolicy,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            &customresourcedefinition::CustomResourceDefinition
        }
        (
            "networking.k8s.io" | "autoscaling" | "policy" | "admissionregistration.k8s.io",
            "Ingress"
            | "IngressClass"
            | "HorizontalPodAutoscaler"
            | "PodDisruptionBudget"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration",
        ) => &Generational,
        _ => return None,
    };
    Some(s)
}
