//! The bootstrap RBAC policy every cluster starts with (kube-apiserver's `rbac-defaults`):
//! `cluster-admin` for `system:masters`, and for every authenticated user discovery
//! (`system:discovery`), self reviews (`system:basic-user`) and `/version`, `/healthz`
//! (`system:public-info-viewer`, also for anonymous requests); the user-facing `admin`, `edit` and
//! `view` ClusterRoles, which aggregate the `system:aggregate-to-*` roles (and any ClusterRole
//! labelled `rbac.authorization.k8s.io/aggregate-to-admin|edit|view: "true"`).

use serde_json::{Value, json};

use crate::apiserver::app::App;
use crate::registry::object::{Candidate, Mode, WriteCtx, write};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;

fn meta(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

const AGGREGATE: &str = "rbac.authorization.k8s.io/aggregate-to-";

/// The rules of `system:aggregate-to-view` (kube's bootstrap policy, 1.33).
fn view_rules() -> Value {
    let read = json!(["get", "list", "watch"]);
    json!([
        {"apiGroups": [""], "resources": ["configmaps", "endpoints", "persistentvolumeclaims",
            "persistentvolumeclaims/status", "pods", "replicationcontrollers",
            "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"], "verbs": read},
        {"apiGroups": [""], "resources": ["bindings", "events", "limitranges", "namespaces/status",
            "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas",
            "resourcequotas/status"], "verbs": read},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": read},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": read},
        {"apiGroups": ["apps"], "resources": ["controllerrevisions", "daemonsets", "daemonsets/status",
            "deployments", "deployments/scale", "deployments/status", "replicasets",
            "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale",
            "statefulsets/status"], "verbs": read},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers",
            "horizontalpodautoscalers/status"], "verbs": read},
        {"apiGroups": ["batch"], "resources": ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], "verbs": read},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets", "poddisruptionbudgets/status"], "verbs": read},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingresses/status", "networkpolicies"], "verbs": read},
    ])
}

/// The rules of `system:aggregate-to-edit`.
fn edit_rules() -> Value {
    let write = json!(["create", "delete", "deletecollection", "patch", "update"]);
    json!([
        {"apiGroups": [""], "resources": ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy",
            "secrets", "services/proxy"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {"apiGroups": [""], "resources": ["pods", "pods/attach", "pods/exec", "pods/portforward",
            "pods/proxy"], "verbs": write},
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps", "events", "persistentvolumeclaims",
            "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts",
            "services", "services/proxy"], "verbs": write},
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
        {"apiGroups": ["apps"], "resources": ["daemonsets", "deployments", "deployments/rollback",
            "deployments/scale", "replicasets", "replicasets/scale", "statefulsets",
            "statefulsets/scale"], "verbs": write},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": write},
        {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": write},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": write},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"], "verbs": write},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "delete",
            "deletecollection", "get", "list", "patch", "update", "watch"]},
    ])
}

/// The rules of `system:aggregate-to-admin`.
fn admin_rules() -> Value {
    json!([
        {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews"], "verbs": ["create"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"],
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]},
    ])
}

/// The aggregated roles: (name, the `aggregate-to-` roles it selects, the labels it carries, the
/// rules of the roles it aggregates as the aggregation controller stores them).
fn aggregated_roles() -> Vec<Value> {
    let concat = |parts: &[Value]| -> Value {
        Value::Array(
            parts
                .iter()
                .filter_map(Value::as_array)
                .flatten()
                .cloned()
                .collect(),
        )
    };
    let labels = |to: &[&str]| -> Value {
        to.iter()
            .map(|t| (format!("{AGGREGATE}{t}"), json!("true")))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let role = |name: &str, labels: Value, rules: Value, aggregation: Option<&str>| {
        let mut m = meta(name);
        if let (Some(l), Some(extra)) = (m["labels"].as_object_mut(), labels.as_object()) {
            l.extend(extra.clone());
        }
        let mut r = json!({"metadata": m, "rules": rules});
        if let Some(to) = aggregation {
            r["aggregationRule"] = json!({"clusterRoleSelectors": [
                {"matchLabels": {format!("{AGGREGATE}{to}"): "true"}}]});
        }
        r
    };
    let (view, edit, admin) = (view_rules(), edit_rules(), admin_rules());
    vec![
        role(
            "system:aggregate-to-view",
            labels(&["admin", "edit", "view"]),
            view.clone(),
            None,
        ),
        role(
            "system:aggregate-to-edit",
            labels(&["admin", "edit"]),
            edit.clone(),
            None,
        ),
        role(
            "system:aggregate-to-admin",
            labels(&["admin"]),
            admin.clone(),
            None,
        ),
        role("view", labels(&["edit"]), view.clone(), Some("view")),
        role(
            "edit",
            labels(&["admin"]),
            concat(&[edit.clone(), view.clone()]),
            Some("edit"),
        ),
        role(
            "admin",
            labels(&[]),
            concat(&[admin, edit, view]),
            Some("admin"),
        ),
    ]
}

fn cluster_roles() -> Vec<(&'static str, Value)> {
    vec![
        (
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        (
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        ),
        (
            "system:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
            ]),
        ),
        (
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        ),
    ]
}

fn bindings() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("cluster-admin", &["system:masters"]),
        ("system:discovery", &["system:authenticated"]),
        ("system:basic-user", &["system:authenticated"]),
        (
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

fn create_missing(app: &App, resource: &str, name: &str, body: Value) -> Result<(), ApiError> {
    let Some(rt) = app
        .backend
        .registry
        .lookup("rbac.authorization.k8s.io", "v1", resource)
    else {
        return Ok(());
    };
    if app.backend.store.get(&rt.store_key(), "", name)?.is_some() {
        return Ok(());
    }
    let ctx = WriteCtx {
        backend: &app.backend,
        rt: &rt,
        ns: "",
        subresource: "",
        manager: "kube-apiserver".into(),
        dry_run: false,
        validation: FieldValidation::Strict,
        authorize_create: None,
    };
    match write(&ctx, name, Mode::Create, |_| Ok(Candidate::Replace(body))) {
        Err(e) if e.code != 409 => Err(e),
        _ => Ok(()),
    }
}

/// Creates the bootstrap ClusterRoles and ClusterRoleBindings that are missing.
pub fn bootstrap(app: &App) -> Result<(), ApiError> {
    const API: &str = "rbac.authorization.k8s.io/v1";
    for (name, rules) in cluster_roles() {
        let body = json!({"apiVersion": API, "kind": "ClusterRole", "metadata": meta(name), "rules": rules});
        create_missing(app, "clusterroles", name, body)?;
    }
    for mut body in aggregated_roles() {
        let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
        body["apiVersion"] = json!(API);
        body["kind"] = json!("ClusterRole");
        create_missing(app, "clusterroles", &name, body)?;
    }
    for (name, groups) in bindings() {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
            .collect();
        let body = json!({
            "apiVersion": API, "kind": "ClusterRoleBinding", "metadata": meta(name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": subjects,
        });
        create_missing(app, "clusterrolebindings", name, body)?;
    }
    Ok(())
}
