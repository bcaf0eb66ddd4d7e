//! Simulated storage: a default StorageClass `standard`, and a provisioner that binds every pending
//! PersistentVolumeClaim of a provisioning class to a new PersistentVolume `pvc-<claim uid>`; when a
//! claim goes, its volume is deleted (reclaim policy Delete) or marked Released.

use serde_json::{Value, json};

use super::MANAGER;
use crate::cluster::Cluster;
use crate::status::ApiError;
use crate::util::{self, s};

/// The provisioner name of the default class.
pub const PROVISIONER: &str = "piceli.dev/sim-local";

/// Creates the default StorageClass when no class exists.
pub fn ensure_class(cluster: &Cluster) -> Result<(), ApiError> {
    let classes = cluster.rt("storage.k8s.io", "v1", "storageclasses")?;
    if !cluster.list(&classes).is_empty() {
        return Ok(());
    }
    let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard",
                     "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
    match cluster.create(&classes, "", class, MANAGER) {
        Err(e) if e.code != 409 => Err(e),
        _ => Ok(()),
    }
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &[
    "storage.k8s.io/storageclasses",
    "/persistentvolumeclaims",
    "/persistentvolumes",
];

/// One turn over every claim and provisioned volume.
pub fn reconcile(cluster: &Cluster) {
    let (Ok(classes), Ok(pvcs), Ok(pvs)) = (
        cluster.rt("storage.k8s.io", "v1", "storageclasses"),
        cluster.rt("", "v1", "persistentvolumeclaims"),
        cluster.rt("", "v1", "persistentvolumes"),
    ) else {
        return;
    };
    let all_classes = cluster.list(&classes);
    let default_class = all_classes
        .iter()
        .find(|c| {
            s(
                c,
                "/metadata/annotations/storageclass.kubernetes.io~1is-default-class",
            ) == "true"
        })
        .map(|c| s(c, "/metadata/name").to_string());
    let claims = cluster.list(&pvcs);
    for pvc in claims.iter() {
        if util::terminating(pvc) || s(pvc, "/status/phase") == "Bound" {
            continue;
        }
        let ns = s(pvc, "/metadata/namespace");
        let name = s(pvc, "/metadata/name");
        let class_name = match pvc
            .pointer("/spec/storageClassName")
            .and_then(Value::as_str)
        {
            Some(c) => c.to_string(),
            None => match &default_class {
                Some(c) => c.clone(),
                None => continue,
            },
        };
        let Some(class) = all_classes
            .iter()
            .find(|c| s(c, "/metadata/name") == class_name)
        else {
            continue;
        };
        let pv_name = format!("pvc-{}", util::uid(pvc));
        let size = pvc
            .pointer("/spec/resources/requests/storage")
            .cloned()
            .unwrap_or(json!("1Gi"));
        let modes = pvc
            .pointer("/spec/accessModes")
            .cloned()
            .unwrap_or(json!(["ReadWriteOnce"]));
        let reclaim = match s(class, "/reclaimPolicy") {
            "" => "Delete".to_string(),
            r => r.to_string(),
        };
        let provisioner = s(class, "/provisioner").to_string();
        if matches!(cluster.get(&pvs, "", &pv_name), Ok(None)) {
            let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}},
                "spec": {"capacity": {"storage": size}, "accessModes": modes,
                         "persistentVolumeReclaimPolicy": reclaim, "storageClassName": class_name,
                         "volumeMode": "Filesystem",
                         "hostPath": {"path": format!("/var/lib/piceli-sim/volumes/{pv_name}"), "type": ""},
                         "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                      "namespace": ns, "name": name, "uid": util::uid(pvc)}}});
            if cluster
                .create(&pvs, "", pv, "persistent-volume-binder")
                .is_err()
            {
                continue;
            }
        }
        let _ = cluster.update(
            &pvs,
            "",
            &pv_name,
            "status",
            "persistent-volume-binder",
            |x| {
                if s(x, "/status/phase") == "Bound" {
                    return false;
                }
                x["status"] = json!({"phase": "Bound"});
                true
            },
        );
        let _ = cluster.update(&pvcs, ns, name, "", "persistent-volume-binder", |x| {
            x["spec"]["volumeName"] = json!(pv_name);
            x["spec"]["storageClassName"] = json!(class_name);
            let a = &mut x["metadata"]["annotations"];
            a["pv.kubernetes.io/bind-completed"] = json!("yes");
            a["pv.kubernetes.io/bound-by-controller"] = json!("yes");
            a["volume.kubernetes.io/storage-provisioner"] = json!(provisioner);
            a["volume.beta.kubernetes.io/storage-provisioner"] = json!(provisioner);
            true
        });
        let _ = cluster.update(&pvcs, ns, name, "status", "persistent-volume-binder", |x| {
            x["status"] =
                json!({"phase": "Bound", "accessModes": modes, "capacity": {"storage": size}});
            true
        });
    }
    // Volumes whose claim is gone.
    for pv in cluster.list(&pvs).iter() {
        let Some(claim_uid) = pv.pointer("/spec/claimRef/uid").and_then(Value::as_str) else {
            continue;
        };
        let provisioned = pv
            .pointer("/metadata/annotations/pv.kubernetes.io~1provisioned-by")
            .is_some();
        if !provisioned || claims.iter().any(|c| util::uid(c) == claim_uid) || util::terminating(pv)
        {
            continue;
        }
        let name = s(pv, "/metadata/name");
        if s(pv, "/spec/persistentVolumeReclaimPolicy") == "Delete" {
            let _ = cluster.remove(&pvs, "", name);
        } else if s(pv, "/status/phase") != "Released" {
            let _ = cluster.update(&pvs, "", name, "status", "persistent-volume-binder", |x| {
                x["status"] = json!({"phase": "Released"});
                true
            });
        }
    }
}
