//! Objects kube-apiserver itself keeps: the `kubernetes` Service in `default` (the bootstrap
//! controller's), with the first address of the service range, port 443 `https`.

use serde_json::json;

use crate::cluster::Cluster;
use crate::status::ApiError;

/// The Service's cluster IP (the first of 10.96.0.0/12, as kubeadm clusters have it).
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// Creates the `kubernetes` Service when it is missing.
pub fn kubernetes_service(cluster: &Cluster) -> Result<(), ApiError> {
    let Some(rt) = cluster.rt("", "v1", "services").ok() else {
        return Ok(());
    };
    if cluster.get(&rt, "default", "kubernetes")?.is_some() {
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
    // The handle's writes ignore unknown fields; this body has none, so the result is that of a
    // strict write.
    match cluster.create(&rt, "default", service, "kube-apiserver") {
        Err(e) if e.code != 409 => Err(e),
        _ => Ok(()),
    }
}
