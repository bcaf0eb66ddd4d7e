//! Objects kube-apiserver itself keeps: the `kubernetes` Service in `default` (the bootstrap
//! controller's), with the first address of the service range, port 443 `https`.

use serde_json::json;

use crate::app::App;
use crate::registry::object::{Candidate, Mode, WriteCtx, write};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;

/// The Service's cluster IP (the first of 10.96.0.0/12, as kubeadm clusters have it).
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// Creates the `kubernetes` Service when it is missing.
pub fn kubernetes_service(app: &App) -> Result<(), ApiError> {
    let Some(rt) = app.registry.lookup("", "v1", "services") else {
        return Ok(());
    };
    if app
        .store
        .get(&rt.store_key(), "default", "kubernetes")?
        .is_some()
    {
        return Ok(());
    }
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "type": "ClusterIP",
            "clusterIP": KUBERNETES_SERVICE_IP,
            "clusterIPs": [KUBERNETES_SERVICE_IP],
            "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        },
    });
    let ctx = WriteCtx {
        app,
        rt: &rt,
        ns: "default",
        subresource: "",
        manager: "kube-apiserver".into(),
        dry_run: false,
        validation: FieldValidation::Strict,
        authorize_create: None,
    };
    match write(&ctx, "kubernetes", Mode::Create, |_| {
        Ok(Candidate::Replace(service))
    }) {
        Err(e) if e.code != 409 => Err(e),
        _ => Ok(()),
    }
}
