//! The operator's RBAC, derived from its controller declarations (see `controller::declared_access`): a
//! ClusterRole and ClusterRoleBinding for cluster-wide watches and cluster-scoped kinds, and a Role and
//! RoleBinding in each namespace a controller watches (the leader Lease in the operator's own), all bound
//! to the operator's ServiceAccount. An app without controllers gets none (webhooks need no RBAC), unless
//! its operator manages its own certificate (`tls: self_managed`).

use super::Sink;
use super::json;
use super::meta::Cx;
use crate::controller::{Access, declared_access};
use crate::error::Error;
use k8s_openapi::api::rbac::v1::PolicyRule;
use piceli_core::model::OperatorTls;
use serde_json::{Value, json};

pub(super) fn rbac(cx: &Cx, operator: &str, out: &mut dyn Sink) -> Result<(), Error> {
    let self_managed = cx
        .app
        .operator
        .as_ref()
        .is_some_and(|o| o.tls == OperatorTls::SelfManaged)
        && !cx.app.webhooks.is_empty();
    if cx.app.controllers.is_empty() && !self_managed {
        return Ok(());
    }
    let mut access = if cx.app.controllers.is_empty() {
        Access::default()
    } else {
        declared_access(cx.app, &cx.namespace, true)?
    };
    if self_managed {
        self_managed_access(&mut access, operator, &cx.namespace);
    }
    let subject =
        json!([{ "kind": "ServiceAccount", "name": operator, "namespace": cx.namespace }]);
    let role_name = format!("{}-{operator}", cx.namespace);
    if !access.cluster.is_empty() {
        let metadata = json("metadata", &cx.cluster_meta(&role_name, &vec![], &vec![]))?;
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata,
            "rules": rules(&access.cluster)?,
        }));
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata,
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name },
            "subjects": subject,
        }));
    }
    for (namespace, namespaced) in &access.namespaced {
        let mut metadata = json("metadata", &cx.meta(operator, &vec![], &vec![]))?;
        metadata["namespace"] = Value::String(namespace.clone());
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": metadata,
            "rules": rules(namespaced)?,
        }));
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": metadata,
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": operator },
            "subjects": subject,
        }));
    }
    Ok(())
}

/// What `tls: self_managed` needs: its Secret (read, watched, written) and its Lease in the operator's
/// namespace, and its own webhook configurations (read and updated, by name) for the `caBundle`.
fn self_managed_access(access: &mut Access, operator: &str, namespace: &str) {
    let rule =
        |group: &str, resources: &[&str], verbs: &[&str], names: Option<Vec<String>>| PolicyRule {
            api_groups: Some(vec![group.to_string()]),
            resources: Some(resources.iter().map(|r| r.to_string()).collect()),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            resource_names: names,
            non_resource_urls: None,
        };
    access.cluster.push(rule(
        "admissionregistration.k8s.io",
        &[
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ],
        &["get", "update"],
        Some(vec![format!("{operator}.{namespace}")]),
    ));
    let own = access.namespaced.entry(namespace.to_string()).or_default();
    own.push(rule(
        "",
        &["secrets"],
        &["get", "list", "watch", "create", "update"],
        None,
    ));
    own.push(rule(
        "coordination.k8s.io",
        &["leases"],
        &["get", "create", "update"],
        None,
    ));
}

fn rules(rules: &[PolicyRule]) -> Result<Value, Error> {
    json("rules", &rules)
}
