//! The bootstrap RBAC policy every cluster starts with (kube-apiserver's `rbac-defaults`):
//! `cluster-admin` for `system:masters`, and for every authenticated user discovery
//! (`system:discovery`), self reviews (`system:basic-user`) and `/version`, `/healthz`
//! (`system:public-info-viewer`).

use serde_json::{Value, json};

use crate::app::App;
use crate::object::{Candidate, Mode, WriteCtx, write};
use crate::status::ApiError;
use crate::validate::FieldValidation;

fn meta(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
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
        .registry
        .lookup("rbac.authorization.k8s.io", "v1", resource)
    else {
        return Ok(());
    };
    if app.store.get(&rt.store_key(), "", name)?.is_some() {
        return Ok(());
    }
    let ctx = WriteCtx {
        app,
        rt: &rt,
        ns: "",
        subresource: "",
        manager: "kube-apiserver".into(),
        dry_run: false,
        validation: FieldValidation::Strict,
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
