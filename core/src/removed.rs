//! API versions of built-in kinds that Kubernetes stopped serving before 1.33, with the release that
//! removed each and what replaces it (the upstream "Deprecated API Migration Guide"). The importer
//! converts objects of these versions; an object of one of them can no longer be applied to a 1.33 cluster.

/// A removed API version of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    /// The Kubernetes release that stopped serving it (`"1.16"`).
    pub removed_in: &'static str,
    /// The apiVersion that serves the kind now, if any (`None`: the kind itself is gone, e.g.
    /// PodSecurityPolicy).
    pub replacement: Option<&'static str>,
}

/// `(apiVersion, kinds, removed in, replacement)`.
const TABLE: &[(&str, &[&str], &str, Option<&str>)] = &[
    (
        "extensions/v1beta1",
        &["Deployment", "DaemonSet", "ReplicaSet"],
        "1.16",
        Some("apps/v1"),
    ),
    (
        "extensions/v1beta1",
        &["NetworkPolicy"],
        "1.16",
        Some("networking.k8s.io/v1"),
    ),
    ("extensions/v1beta1", &["PodSecurityPolicy"], "1.16", None),
    (
        "extensions/v1beta1",
        &["Ingress"],
        "1.22",
        Some("networking.k8s.io/v1"),
    ),
    (
        "apps/v1beta1",
        &["Deployment", "StatefulSet", "ControllerRevision"],
        "1.16",
        Some("apps/v1"),
    ),
    (
        "apps/v1beta2",
        &[
            "Deployment",
            "DaemonSet",
            "ReplicaSet",
            "StatefulSet",
            "ControllerRevision",
        ],
        "1.16",
        Some("apps/v1"),
    ),
    (
        "networking.k8s.io/v1beta1",
        &["Ingress", "IngressClass"],
        "1.22",
        Some("networking.k8s.io/v1"),
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
        "1.22",
        Some("admissionregistration.k8s.io/v1"),
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        &["CustomResourceDefinition"],
        "1.22",
        Some("apiextensions.k8s.io/v1"),
    ),
    (
        "apiregistration.k8s.io/v1beta1",
        &["APIService"],
        "1.22",
        Some("apiregistration.k8s.io/v1"),
    ),
    (
        "certificates.k8s.io/v1beta1",
        &["CertificateSigningRequest"],
        "1.22",
        Some("certificates.k8s.io/v1"),
    ),
    (
        "coordination.k8s.io/v1beta1",
        &["Lease"],
        "1.22",
        Some("coordination.k8s.io/v1"),
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        &["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
        "1.22",
        Some("rbac.authorization.k8s.io/v1"),
    ),
    (
        "scheduling.k8s.io/v1beta1",
        &["PriorityClass"],
        "1.22",
        Some("scheduling.k8s.io/v1"),
    ),
    (
        "storage.k8s.io/v1beta1",
        &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
        "1.22",
        Some("storage.k8s.io/v1"),
    ),
    (
        "storage.k8s.io/v1beta1",
        &["CSIStorageCapacity"],
        "1.27",
        Some("storage.k8s.io/v1"),
    ),
    ("batch/v1beta1", &["CronJob"], "1.25", Some("batch/v1")),
    (
        "discovery.k8s.io/v1beta1",
        &["EndpointSlice"],
        "1.25",
        Some("discovery.k8s.io/v1"),
    ),
    (
        "events.k8s.io/v1beta1",
        &["Event"],
        "1.25",
        Some("events.k8s.io/v1"),
    ),
    (
        "autoscaling/v2beta1",
        &["HorizontalPodAutoscaler"],
        "1.25",
        Some("autoscaling/v2"),
    ),
    (
        "autoscaling/v2beta2",
        &["HorizontalPodAutoscaler"],
        "1.26",
        Some("autoscaling/v2"),
    ),
    (
        "policy/v1beta1",
        &["PodDisruptionBudget"],
        "1.25",
        Some("policy/v1"),
    ),
    ("policy/v1beta1", &["PodSecurityPolicy"], "1.25", None),
    (
        "node.k8s.io/v1beta1",
        &["RuntimeClass"],
        "1.25",
        Some("node.k8s.io/v1"),
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "1.26",
        Some("flowcontrol.apiserver.k8s.io/v1"),
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "1.29",
        Some("flowcontrol.apiserver.k8s.io/v1"),
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "1.32",
        Some("flowcontrol.apiserver.k8s.io/v1"),
    ),
];

/// Whether `kind` in `api_version` is a removed built-in version, and what replaces it.
pub fn removed(api_version: &str, kind: &str) -> Option<Removed> {
    TABLE
        .iter()
        .find(|(version, kinds, _, _)| *version == api_version && kinds.contains(&kind))
        .map(|(_, _, removed_in, replacement)| Removed {
            removed_in,
            replacement: *replacement,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_versions_name_their_release_and_replacement() {
        assert_eq!(
            removed("apps/v1beta2", "Deployment"),
            Some(Removed {
                removed_in: "1.16",
                replacement: Some("apps/v1")
            })
        );
        assert_eq!(
            removed("autoscaling/v2beta1", "HorizontalPodAutoscaler").and_then(|r| r.replacement),
            Some("autoscaling/v2")
        );
        assert_eq!(
            removed("policy/v1beta1", "PodSecurityPolicy").map(|r| r.replacement),
            Some(None)
        );
        // Served in 1.33, or not built in.
        assert_eq!(removed("apps/v1", "Deployment"), None);
        assert_eq!(removed("autoscaling/v1", "HorizontalPodAutoscaler"), None);
        assert_eq!(removed("traefik.io/v1alpha1", "IngressRoute"), None);
        // A version removed for one kind is not removed for another it never served.
        assert_eq!(removed("extensions/v1beta1", "Service"), None);
    }
}
