//! The resource types the simulator serves: the built-in kinds and those defined by CRDs.

pub mod admission;
pub mod backend;
pub mod convert;
pub mod crd;
pub(crate) mod crd_types;
pub mod defaults;
pub mod delete;
pub mod field_labels;
pub mod fields;
pub(crate) mod kinds;
pub(crate) mod label_parser;
pub mod object;
pub mod per_kind;
pub mod rules;
pub mod schema;
pub(crate) mod secret_rules;
pub mod selectors;
pub mod smp;
pub mod strategy;
pub mod table;
pub mod validate;

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// A printer column of a CRD (`additionalPrinterColumns`).
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    /// The column's header.
    pub name: String,
    /// The OpenAPI type of the cells (`string`, `integer`, `date`, …).
    pub type_: String,
    /// The JSON path of the cells (`.spec.replicas`).
    pub json_path: String,
    /// 0: always shown; above 0: only with `-o wide`.
    pub priority: i64,
}

/// Where the schema of a resource type comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaSource {
    /// A definition name in the embedded Kubernetes schemas.
    Builtin(&'static str),
    /// A CRD version's `openAPIV3Schema` (already converted to the OpenAPI components form).
    Crd(Value),
}

/// One resource type at one group-version.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The version (`v1`, `v1beta1`).
    pub version: String,
    /// The plural resource name used in paths (`deployments`).
    pub plural: String,
    /// The singular name (`deployment`).
    pub singular: String,
    /// The kind (`Deployment`).
    pub kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Short names (`deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Whether the `status` subresource is served.
    pub status_subresource: bool,
    /// JSON paths (dotted) of spec/status replicas and the status label selector, when `scale` is served.
    pub scale: Option<ScalePaths>,
    /// Where the type's schema comes from.
    pub schema: SchemaSource,
    /// The printer columns of a CRD (empty for built-in types).
    pub columns: Vec<PrinterColumn>,
    /// Whether this type is defined by a CRD (objects are stored once per resource, whatever version).
    pub crd: bool,
    /// Review-style types (access reviews) that only answer `create` and store nothing.
    pub create_only: bool,
    /// A CRD version's `selectableFields` (`spec.color`), usable in field selectors.
    pub selectable_fields: Vec<String>,
}

/// Where the scale subresource reads and writes replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalePaths {
    /// The JSON path (dotted) of the desired replicas (`spec.replicas`).
    pub spec_replicas: String,
    /// The JSON path (dotted) of the observed replicas (`status.replicas`).
    pub status_replicas: String,
    /// The JSON path (dotted) of the label selector string in status, if any.
    pub label_selector: Option<String>,
}

impl ResourceType {
    /// The key objects of this type are stored under: `group/plural`.
    pub fn store_key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    /// `apps/v1` or `v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The verbs discovery lists.
    pub fn verbs(&self) -> Vec<&'static str> {
        if self.create_only {
            return vec!["create"];
        }
        vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
    }
}

type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    bool,
    bool,
    &'static str,
);

const ALL: &[&str] = &["all"];
const NONE: &[&str] = &[];

// (group, version, plural, kind, namespaced, short names, status subresource, scale subresource, schema)
#[rustfmt::skip]
const BUILTINS: &[Row] = &[
    ("", "v1", "namespaces", "Namespace", false, &["ns"], true, false, "io.k8s.api.core.v1.Namespace"),
    ("", "v1", "configmaps", "ConfigMap", true, &["cm"], false, false, "io.k8s.api.core.v1.ConfigMap"),
    ("", "v1", "secrets", "Secret", true, NONE, false, false, "io.k8s.api.core.v1.Secret"),
    ("", "v1", "services", "Service", true, &["svc"], true, false, "io.k8s.api.core.v1.Service"),
    ("", "v1", "endpoints", "Endpoints", true, &["ep"], false, false, "io.k8s.api.core.v1.Endpoints"),
    ("", "v1", "pods", "Pod", true, &["po"], true, false, "io.k8s.api.core.v1.Pod"),
    ("", "v1", "serviceaccounts", "ServiceAccount", true, &["sa"], false, false, "io.k8s.api.core.v1.ServiceAccount"),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, &["pvc"], true, false, "io.k8s.api.core.v1.PersistentVolumeClaim"),
    ("", "v1", "persistentvolumes", "PersistentVolume", false, &["pv"], true, false, "io.k8s.api.core.v1.PersistentVolume"),
    ("", "v1", "events", "Event", true, &["ev"], false, false, "io.k8s.api.core.v1.Event"),
    ("", "v1", "nodes", "Node", false, &["no"], true, false, "io.k8s.api.core.v1.Node"),
    ("", "v1", "limitranges", "LimitRange", true, &["limits"], false, false, "io.k8s.api.core.v1.LimitRange"),
    ("", "v1", "resourcequotas", "ResourceQuota", true, &["quota"], true, false, "io.k8s.api.core.v1.ResourceQuota"),
    ("", "v1", "podtemplates", "PodTemplate", true, NONE, false, false, "io.k8s.api.core.v1.PodTemplate"),
    ("", "v1", "replicationcontrollers", "ReplicationController", true, &["rc"], true, true, "io.k8s.api.core.v1.ReplicationController"),
    ("apps", "v1", "deployments", "Deployment", true, &["deploy"], true, true, "io.k8s.api.apps.v1.Deployment"),
    ("apps", "v1", "replicasets", "ReplicaSet", true, &["rs"], true, true, "io.k8s.api.apps.v1.ReplicaSet"),
    ("apps", "v1", "statefulsets", "StatefulSet", true, &["sts"], true, true, "io.k8s.api.apps.v1.StatefulSet"),
    ("apps", "v1", "daemonsets", "DaemonSet", true, &["ds"], true, false, "io.k8s.api.apps.v1.DaemonSet"),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", true, NONE, false, false, "io.k8s.api.apps.v1.ControllerRevision"),
    ("batch", "v1", "jobs", "Job", true, NONE, true, false, "io.k8s.api.batch.v1.Job"),
    ("batch", "v1", "cronjobs", "CronJob", true, &["cj"], true, false, "io.k8s.api.batch.v1.CronJob"),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, &["netpol"], false, false, "io.k8s.api.networking.v1.NetworkPolicy"),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", true, &["ing"], true, false, "io.k8s.api.networking.v1.Ingress"),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false, NONE, false, false, "io.k8s.api.networking.v1.IngressClass"),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, &["hpa"], true, false, "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"),
    // Stored as v2 (the same store key), converted by `convert`.
    ("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, &["hpa"], true, false, "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, &["pdb"], true, false, "io.k8s.api.policy.v1.PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", true, NONE, false, false, "io.k8s.api.rbac.v1.Role"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, NONE, false, false, "io.k8s.api.rbac.v1.RoleBinding"),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, NONE, false, false, "io.k8s.api.rbac.v1.ClusterRole"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, NONE, false, false, "io.k8s.api.rbac.v1.ClusterRoleBinding"),
    ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, NONE, false, false, "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, NONE, false, false, "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false, NONE, true, false, "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false, NONE, false, false, "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding"),
    ("coordination.k8s.io", "v1", "leases", "Lease", true, NONE, false, false, "io.k8s.api.coordination.v1.Lease"),
    ("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, NONE, false, false, "io.k8s.api.discovery.v1.EndpointSlice"),
    ("events.k8s.io", "v1", "events", "Event", true, NONE, false, false, "io.k8s.api.events.v1.Event"),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", false, &["sc"], false, false, "io.k8s.api.storage.v1.StorageClass"),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", false, NONE, false, false, "io.k8s.api.storage.v1.CSIDriver"),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, &["pc"], false, false, "io.k8s.api.scheduling.v1.PriorityClass"),
    ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false, NONE, false, false, "io.k8s.api.node.v1.RuntimeClass"),
    ("", "v1", "bindings", "Binding", true, NONE, false, false, "io.k8s.api.core.v1.Binding"),
    ("", "v1", "componentstatuses", "ComponentStatus", false, &["cs"], false, false, "io.k8s.api.core.v1.ComponentStatus"),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", false, NONE, true, false, "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"),
    ("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", false, &["csr"], true, false, "io.k8s.api.certificates.v1.CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", false, NONE, true, false, "io.k8s.api.flowcontrol.v1.FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration", false, NONE, true, false, "io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration"),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", false, NONE, false, false, "io.k8s.api.storage.v1.CSINode"),
    ("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", true, NONE, false, false, "io.k8s.api.storage.v1.CSIStorageCapacity"),
    ("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", false, NONE, true, false, "io.k8s.api.storage.v1.VolumeAttachment"),
    ("networking.k8s.io", "v1", "ipaddresses", "IPAddress", false, &["ip"], false, false, "io.k8s.api.networking.v1.IPAddress"),
    ("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", false, NONE, true, false, "io.k8s.api.networking.v1.ServiceCIDR"),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false, &["crd", "crds"], true, false, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"),
];

const IN_ALL: &[&str] = &[
    "pods",
    "services",
    "deployments",
    "replicasets",
    "statefulsets",
    "daemonsets",
    "jobs",
    "cronjobs",
    "horizontalpodautoscalers",
];

fn builtin(row: &Row) -> ResourceType {
    let (group, version, plural, kind, namespaced, short, status, scale, schema) = *row;
    ResourceType {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: if IN_ALL.contains(&plural) { ALL } else { NONE }
            .iter()
            .map(|s| s.to_string())
            .collect(),
        status_subresource: status,
        scale: scale.then(|| ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }),
        schema: SchemaSource::Builtin(schema),
        columns: Vec::new(),
        crd: false,
        create_only: false,
        selectable_fields: Vec::new(),
    }
}

// Reviews answered for the requesting user without storing anything: (group, kind, plural, schema).
const REVIEWS: &[(&str, &str, &str, &str)] = &[
    (
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
    ),
    (
        "authentication.k8s.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
        "io.k8s.api.authentication.v1.SelfSubjectReview",
    ),
    (
        "authentication.k8s.io",
        "TokenReview",
        "tokenreviews",
        "io.k8s.api.authentication.v1.TokenReview",
    ),
    (
        "authorization.k8s.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
        "io.k8s.api.authorization.v1.SubjectAccessReview",
    ),
    (
        "authorization.k8s.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        "io.k8s.api.authorization.v1.LocalSubjectAccessReview",
    ),
];

fn review(row: &(&'static str, &'static str, &'static str, &'static str)) -> ResourceType {
    let (group, kind, plural, schema) = *row;
    ResourceType {
        group: group.into(),
        version: "v1".into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        namespaced: kind == "LocalSubjectAccessReview",
        short_names: Vec::new(),
        categories: Vec::new(),
        status_subresource: false,
        scale: None,
        schema: SchemaSource::Builtin(schema),
        columns: Vec::new(),
        crd: false,
        create_only: true,
        selectable_fields: Vec::new(),
    }
}

/// Built-in types plus the types of the CRDs currently stored.
pub struct Registry {
    builtins: Vec<ResourceType>,
    crds: RwLock<Vec<ResourceType>>,
    /// Bumped whenever the CRD-defined types change, so documents built from the served types
    /// (the OpenAPI v2 document) know when to build again.
    generation: AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            builtins: BUILTINS
                .iter()
                .map(builtin)
                .chain(REVIEWS.iter().map(review))
                .collect(),
            crds: RwLock::new(Vec::new()),
            generation: AtomicU64::new(0),
        }
    }
}

impl Registry {
    /// Every served type, built-ins first.
    pub fn all(&self) -> Vec<ResourceType> {
        let mut out = self.builtins.clone();
        if let Ok(crds) = self.crds.read() {
            out.extend(crds.iter().cloned());
        }
        out
    }

    /// The type served at `group/version/plural`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        let hit =
            |r: &&ResourceType| r.group == group && r.version == version && r.plural == plural;
        if let Some(r) = self.builtins.iter().find(hit) {
            return Some(r.clone());
        }
        self.crds.read().ok()?.iter().find(hit).cloned()
    }

    /// The served type for a kind at an apiVersion (used for CRD objects and validation).
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        self.all()
            .into_iter()
            .find(|r| r.api_version() == api_version && r.kind == kind)
    }

    /// Replaces the CRD-defined types (called whenever CRDs change); the generation moves on only
    /// when they differ from the ones served.
    pub fn set_crds(&self, types: Vec<ResourceType>) {
        if let Ok(mut crds) = self.crds.write()
            && *crds != types
        {
            *crds = types;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Counts the changes of the served types: equal numbers mean the same types.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_up_builtins() {
        let reg = Registry::default();
        let d = reg
            .lookup("apps", "v1", "deployments")
            .expect("deployments served");
        assert_eq!(d.kind, "Deployment");
        assert_eq!(d.store_key(), "apps/deployments");
        assert!(d.scale.is_some());
        assert!(reg.lookup("apps", "v1", "nothing").is_none());
        assert_eq!(
            reg.by_kind("v1", "ConfigMap").map(|r| r.plural),
            Some("configmaps".to_string())
        );
    }
}
