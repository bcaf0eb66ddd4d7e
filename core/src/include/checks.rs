//! What a 1.33 API server would refuse in an included object: API versions it no longer serves, names
//! its kind does not allow, fields its schema does not have, images without a digest, and another
//! namespace than the app's.

use super::IncludeError;
use super::IncludedObject;
use crate::codes::Code;
use crate::spanned::Loc;
use serde_json::Value;

/// Built-in kinds that are not namespaced (an included object of one keeps no namespace).
pub const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "StorageClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "IngressClass",
    "PriorityClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "APIService",
    "RuntimeClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
    "ClusterIssuer",
];

/// The namespace an included object names for itself, when it is namespaced and names one.
pub fn own_namespace(object: &Value) -> Option<&str> {
    let kind = object["kind"].as_str().unwrap_or_default();
    object["metadata"]["namespace"]
        .as_str()
        .filter(|_| !CLUSTER_SCOPED.contains(&kind))
}

/// Why an included object (`what`) naming namespace `ns` would leave the app: the first target whose
/// namespace is another, as PCL0073's message; `None` when every target deploys to `ns`. The help is
/// [`OTHER_NAMESPACE_HELP`]. The macro asks for a file's objects, the runtime for objects from Rust.
pub fn other_namespace(what: &str, ns: &str, targets: &[crate::model::Target]) -> Option<String> {
    let target = targets.iter().find(|t| t.namespace.v != ns)?;
    Some(format!(
        "{what} is in namespace `{ns}`, not target `{}`'s `{}`",
        target.name.v, target.namespace.v
    ))
}

/// PCL0073's help.
pub const OTHER_NAMESPACE_HELP: &str = "remove its `metadata.namespace` to deploy it with the app, or write `{ namespace: keep }` after the include to keep it there";

/// PCL0074's message for an included object (`what`) running `image`.
pub fn unpinned_message(what: &str, image: &str) -> String {
    format!("{what} runs `{image}`, which is not pinned by digest")
}

/// What a 1.33 cluster would refuse in an included object, each as an error of the object's document:
/// an API version that is no longer served (PCL0058, with its replacement) and a name its kind does not
/// allow (PCL0059). Every problem, not only the first.
pub fn object_problems(o: &IncludedObject) -> Vec<(IncludeError, String)> {
    let api_version = o.object["apiVersion"].as_str().unwrap_or_default();
    let kind = o.object["kind"].as_str().unwrap_or_default();
    let name = o.object["metadata"]["name"].as_str().unwrap_or_default();
    let error = |code, message: String| IncludeError {
        code,
        line: o.line,
        column: 1,
        message,
    };
    let mut out = Vec::new();
    if let Some(gone) = crate::removed::removed(api_version, kind) {
        let message = format!(
            "{api_version} {kind} `{name}`: {api_version} is not served since Kubernetes {}",
            gone.removed_in
        );
        let help = match gone.replacement {
            Some(to) => format!(
                "write it as {to} (`piceli import yaml FILE` converts it and says what changed)"
            ),
            None => format!("remove it: Kubernetes 1.33 has no {kind}"),
        };
        out.push((error(Code::IncludeRemovedVersion, message), help));
    }
    if let Some(Err(e)) = crate::rules::names::object_name(api_version, kind, name) {
        out.push((
            error(
                Code::IncludeInvalidName,
                format!("{kind} `{name}`: {}", e.message),
            ),
            e.help,
        ));
    }
    out
}

/// Every problem of an included object's `spec` against the 1.33 schema of
/// its kind, for the kinds whose types the schema tables carry: unknown fields with did-you-mean, value
/// types, enum values, required fields. `what` prefixes each message (`k8s/legacy.yaml:12: Deployment api`).
pub fn schema_problems(object: &Value, what: &str) -> Vec<crate::diag::Diagnostic> {
    use crate::schema::*;
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let root = match (api_version, kind) {
        ("apps/v1", "Deployment") => DEPLOYMENT_SPEC,
        ("apps/v1", "StatefulSet") => STATEFUL_SET_SPEC,
        ("apps/v1", "DaemonSet") => DAEMON_SET_SPEC,
        ("batch/v1", "Job") => JOB_SPEC,
        ("batch/v1", "CronJob") => CRON_JOB_SPEC,
        ("v1", "Service") => SERVICE_SPEC,
        ("v1", "PersistentVolumeClaim") => PERSISTENT_VOLUME_CLAIM_SPEC,
        ("networking.k8s.io/v1", "Ingress") => INGRESS_SPEC,
        ("networking.k8s.io/v1", "NetworkPolicy") => NETWORK_POLICY_SPEC,
        ("autoscaling/v2", "HorizontalPodAutoscaler") => HORIZONTAL_POD_AUTOSCALER_SPEC,
        ("policy/v1", "PodDisruptionBudget") => POD_DISRUPTION_BUDGET_SPEC,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if let Some(crate::model::BlockValue::Map(spec)) = object
        .get("spec")
        .and_then(|v| crate::model::BlockValue::from_json(v, Loc::NONE))
    {
        check::check(&spec, root, &format!("{what} › spec"), &[], &mut out);
    }
    out
}

/// The images of a built-in object's pod template (Pods, workloads, Jobs, CronJobs: containers, init and
/// ephemeral containers) that are not pinned by digest.
pub fn unpinned_images(object: &Value) -> Vec<String> {
    let pod = match object["kind"].as_str() {
        Some("Pod") => &object["spec"],
        Some("Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job") => {
            &object["spec"]["template"]["spec"]
        }
        Some("CronJob") => &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => return Vec::new(),
    };
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|list| pod[list].as_array().into_iter().flatten())
        .filter_map(|c| c["image"].as_str())
        .filter(|image| {
            crate::rules::image::parse_image(image).map_or(true, |parsed| parsed.digest.is_none())
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::include::{check_values, parse_objects};

    #[test]
    fn an_included_spec_is_checked_against_its_kinds_schema() {
        let o = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
            "spec": {"replica": 2, "selector": {"matchLabels": {"app": "api"}},
                     "template": {"metadata": {"labels": {"app": "api"}},
                                  "spec": {"containers": [{"name": "api", "image": "x"}]}}}
        });
        let problems = schema_problems(&o, "f.yaml:1: Deployment `api`");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("replica"),
            "{}",
            problems[0].message
        );
        assert!(
            problems[0].help.contains("replicas"),
            "{}",
            problems[0].help
        );
        let fine = serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
                                      "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]}});
        assert!(schema_problems(&fine, "f").is_empty());
    }

    #[test]
    fn a_removed_version_and_a_bad_name_are_both_reported_and_rust_objects_too() {
        let text = "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: Web}\n";
        let objects = parse_objects(text, false).expect("parses");
        let problems = object_problems(&objects[0]);
        let codes: Vec<Code> = problems.iter().map(|(e, _)| e.code).collect();
        assert_eq!(
            codes,
            [Code::IncludeRemovedVersion, Code::IncludeInvalidName]
        );
        assert!(problems[0].1.contains("policy/v1"), "{}", problems[0].1);
        let err = check_values(&[serde_json::json!({
            "apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "web"}
        })])
        .expect_err("refused");
        assert_eq!(err.code, Code::IncludeRemovedVersion);
        assert!(err.message.contains("1.22"), "{}", err.message);
        let fine = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "metadata": {"name": "system:aggregate-to-view"}});
        assert_eq!(check_values(&[fine]), Ok(()));
    }
}
