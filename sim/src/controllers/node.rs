//! The simulated node: `piceli-sim-node`, created when missing, with a Ready status as a kubelet
//! would report it.

use serde_json::json;

use crate::cluster::Cluster;
use crate::kubelet::{NODE_IP, NODE_NAME};
use crate::status::ApiError;

/// Creates the node (if missing) and makes sure its status says Ready.
pub fn ensure(cluster: &Cluster) -> Result<(), ApiError> {
    let nodes = cluster.rt("", "v1", "nodes")?;
    if cluster.get(&nodes, "", NODE_NAME)?.is_none() {
        let node = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE_NAME, "labels": {
                "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64"}},
            "spec": {"podCIDR": "10.244.0.0/16", "podCIDRs": ["10.244.0.0/16"]},
        });
        match cluster.create(&nodes, "", node, "kubelet") {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    let now = crate::time::now_rfc3339();
    let resources =
        json!({"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"});
    let cond = |t: &str, s: &str, reason: &str, msg: &str| {
        json!({"type": t, "status": s, "reason": reason, "message": msg,
               "lastHeartbeatTime": now, "lastTransitionTime": now})
    };
    let status = json!({
        "capacity": resources, "allocatable": resources,
        "conditions": [
            cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status (simulated by piceli-sim)"),
        ],
        "addresses": [{"type": "InternalIP", "address": NODE_IP}, {"type": "Hostname", "address": NODE_NAME}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": "piceli-sim", "systemUUID": "piceli-sim", "bootID": "piceli-sim",
            "kernelVersion": "6.0.0", "osImage": "piceli-sim", "containerRuntimeVersion": "sim://1.0",
            "kubeletVersion": "v1.33.0", "kubeProxyVersion": "v1.33.0",
            "operatingSystem": "linux", "architecture": "amd64"},
    });
    let r = cluster.update(&nodes, "", NODE_NAME, "status", "kubelet", |n| {
        let ready = n
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
        if ready {
            return false;
        }
        n["status"] = status;
        true
    });
    match r {
        Err(e) if e.code != 400 => Err(e),
        _ => Ok(()),
    }
}
