//! One [`Strategy`](super::strategy::Strategy) per built-in kind, and the table that finds them.

mod configmap;
mod cronjob;
mod customresourcedefinition;
mod daemonset;
mod deployment;
mod job;
mod namespace;
mod networkpolicy;
mod persistentvolumeclaim;
mod pod;
mod replicaset;
mod secret;
mod service;
mod statefulset;

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
        ("", "Service") => &service::Service,
        ("", "Namespace") => &namespace::Namespace,
        ("", "Secret") => &secret::Secret,
        ("", "ConfigMap") => &configmap::ConfigMap,
        ("", "PersistentVolumeClaim") => &persistentvolumeclaim::PersistentVolumeClaim,
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
