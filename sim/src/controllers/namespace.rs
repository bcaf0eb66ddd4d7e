//! What kube-controller-manager puts in every namespace: the `default` ServiceAccount
//! (serviceaccount-controller) and the `kube-root-ca.crt` ConfigMap with the cluster's CA
//! (root-ca-cert-publisher), re-created when deleted and corrected when changed.

use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::util;

/// The ConfigMap the root CA publisher keeps in every namespace.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Whether a change of this object (store key, name) calls for a turn of this controller.
pub fn triggers(rk: &str, name: &str) -> bool {
    rk == "/namespaces"
        || (rk == "/serviceaccounts" && name == "default")
        || (rk == "/configmaps" && name == ROOT_CA_CONFIGMAP)
}

/// Ensures both objects in every namespace that is not terminating.
pub fn reconcile(cluster: &Cluster) {
    let (Ok(namespaces), Ok(sas), Ok(cms)) = (
        cluster.rt("", "v1", "namespaces"),
        cluster.rt("", "v1", "serviceaccounts"),
        cluster.rt("", "v1", "configmaps"),
    ) else {
        return;
    };
    for ns in cluster.list(&namespaces).iter() {
        if util::terminating(ns) {
            continue;
        }
        let name = util::s(ns, "/metadata/name").to_string();
        if matches!(cluster.get(&sas, &name, "default"), Ok(None)) {
            let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
            let _ = cluster.create(&sas, &name, sa, super::MANAGER);
        }
        let want = json!({"ca.crt": cluster.ca_pem()});
        match cluster.get(&cms, &name, ROOT_CA_CONFIGMAP) {
            Ok(None) => {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": ROOT_CA_CONFIGMAP, "annotations": {"kubernetes.io/description": DESCRIPTION}},
                    "data": want});
                let _ = cluster.create(&cms, &name, cm, super::MANAGER);
            }
            Ok(Some(cm)) if cm.get("data") != Some(&want) => {
                let _ = cluster.update(
                    &cms,
                    &name,
                    ROOT_CA_CONFIGMAP,
                    "",
                    super::MANAGER,
                    |c: &mut Value| {
                        c["data"] = want;
                        true
                    },
                );
            }
            _ => {}
        }
    }
}
