//! The operator's RBAC, derived from its controller declarations (see `controller::declared_access`): a
//! ClusterRole and ClusterRoleBinding for cluster-wide watches and cluster-scoped kinds, and a Role and
//! RoleBinding in each namespace a controller watches (the leader Lease in the operator's own), all bound
//! to the operator's ServiceAccount. An app without controllers gets none (webhooks need no RBAC).

use super::Sink;
use super::json;
use super::meta::Cx;
use crate::controller::declared_access;
use crate::error::Error;
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{Value, json};

pub(super) fn rbac(cx: &Cx, operator: &str, out: &mut dyn Sink) -> Result<(), Error> {
    if cx.app.controllers.is_empty() {
        return Ok(());
    }
    let access = declared_access(cx.app, &cx.namespace, true)?;
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

fn rules(rules: &[PolicyRule]) -> Result<Value, Error> {
    json("rules", &rules)
}
