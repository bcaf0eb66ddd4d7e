//! The Kubernetes 1.33 resources an admission webhook can be registered for, by the name a webhook
//! declaration writes (`pods`, `deployments.apps`): group, version, kind, scope, and the k8s-openapi type
//! a handler's `Request<T>` must use. A test in piceli-runtime checks every row against k8s-openapi.

/// One resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// The plural name (`deployments`).
    pub plural: &'static str,
    /// The API group (`apps`; empty for the core group).
    pub group: &'static str,
    /// The version served (`v1`).
    pub version: &'static str,
    /// The kind (`Deployment`).
    pub kind: &'static str,
    /// Namespaced (`true`) or cluster-scoped.
    pub namespaced: bool,
    /// The type under `k8s_openapi::api` (`apps::v1::Deployment`).
    pub rust_type: &'static str,
}

impl Resource {
    /// How a declaration names it: `pods`, `deployments.apps`.
    pub fn written(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

macro_rules! resources {
    ($($plural:literal $group:literal $version:literal $kind:ident $ns:literal $path:literal;)*) => {
        /// Every resource, core group first, then by group.
        pub const RESOURCES: &[Resource] = &[$(Resource {
            plural: $plural,
            group: $group,
            version: $version,
            kind: stringify!($kind),
            namespaced: $ns,
            rust_type: concat!($path, "::", stringify!($kind)),
        },)*];
    };
}

resources! {
    "configmaps" "" "v1" ConfigMap true "core::v1";
    "endpoints" "" "v1" Endpoints true "core::v1";
    "events" "" "v1" Event true "core::v1";
    "limitranges" "" "v1" LimitRange true "core::v1";
    "namespaces" "" "v1" Namespace false "core::v1";
    "nodes" "" "v1" Node false "core::v1";
    "persistentvolumeclaims" "" "v1" PersistentVolumeClaim true "core::v1";
    "persistentvolumes" "" "v1" PersistentVolume false "core::v1";
    "pods" "" "v1" Pod true "core::v1";
    "podtemplates" "" "v1" PodTemplate true "core::v1";
    "replicationcontrollers" "" "v1" ReplicationController true "core::v1";
    "resourcequotas" "" "v1" ResourceQuota true "core::v1";
    "secrets" "" "v1" Secret true "core::v1";
    "serviceaccounts" "" "v1" ServiceAccount true "core::v1";
    "services" "" "v1" Service true "core::v1";
    "mutatingwebhookconfigurations" "admissionregistration.k8s.io" "v1" MutatingWebhookConfiguration false "admissionregistration::v1";
    "validatingwebhookconfigurations" "admissionregistration.k8s.io" "v1" ValidatingWebhookConfiguration false "admissionregistration::v1";
    "controllerrevisions" "apps" "v1" ControllerRevision true "apps::v1";
    "daemonsets" "apps" "v1" DaemonSet true "apps::v1";
    "deployments" "apps" "v1" Deployment true "apps::v1";
    "replicasets" "apps" "v1" ReplicaSet true "apps::v1";
    "statefulsets" "apps" "v1" StatefulSet true "apps::v1";
    "horizontalpodautoscalers" "autoscaling" "v2" HorizontalPodAutoscaler true "autoscaling::v2";
    "cronjobs" "batch" "v1" CronJob true "batch::v1";
    "jobs" "batch" "v1" Job true "batch::v1";
    "certificatesigningrequests" "certificates.k8s.io" "v1" CertificateSigningRequest false "certificates::v1";
    "leases" "coordination.k8s.io" "v1" Lease true "coordination::v1";
    "endpointslices" "discovery.k8s.io" "v1" EndpointSlice true "discovery::v1";
    "ingressclasses" "networking.k8s.io" "v1" IngressClass false "networking::v1";
    "ingresses" "networking.k8s.io" "v1" Ingress true "networking::v1";
    "networkpolicies" "networking.k8s.io" "v1" NetworkPolicy true "networking::v1";
    "runtimeclasses" "node.k8s.io" "v1" RuntimeClass false "node::v1";
    "poddisruptionbudgets" "policy" "v1" PodDisruptionBudget true "policy::v1";
    "clusterrolebindings" "rbac.authorization.k8s.io" "v1" ClusterRoleBinding false "rbac::v1";
    "clusterroles" "rbac.authorization.k8s.io" "v1" ClusterRole false "rbac::v1";
    "rolebindings" "rbac.authorization.k8s.io" "v1" RoleBinding true "rbac::v1";
    "roles" "rbac.authorization.k8s.io" "v1" Role true "rbac::v1";
    "priorityclasses" "scheduling.k8s.io" "v1" PriorityClass false "scheduling::v1";
    "csidrivers" "storage.k8s.io" "v1" CSIDriver false "storage::v1";
    "csinodes" "storage.k8s.io" "v1" CSINode false "storage::v1";
    "storageclasses" "storage.k8s.io" "v1" StorageClass false "storage::v1";
    "volumeattachments" "storage.k8s.io" "v1" VolumeAttachment false "storage::v1";
}

/// The resource a declaration names (`deployments.apps`, `pods`).
pub fn lookup(written: &str) -> Option<&'static Resource> {
    let (plural, group) = written.split_once('.').unwrap_or((written, ""));
    RESOURCES
        .iter()
        .find(|r| r.plural == plural && r.group == group)
}

/// The operations a webhook rule may list.
pub const OPERATIONS: &[&str] = &["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_found_by_the_name_a_declaration_writes() {
        assert_eq!(
            lookup("deployments.apps").map(|r| r.kind),
            Some("Deployment")
        );
        assert_eq!(lookup("pods").map(|r| r.rust_type), Some("core::v1::Pod"));
        assert_eq!(lookup("deployments"), None, "the group is part of the name");
        assert_eq!(lookup("pods.apps"), None);
        for r in RESOURCES {
            assert_eq!(lookup(&r.written()), Some(r));
        }
    }
}
