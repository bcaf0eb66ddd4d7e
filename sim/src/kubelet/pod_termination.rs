//! The kubelet's side of graceful pod deletion: a pod marked `Terminating` with a grace period has
//! its containers stopped at once (nothing runs here) and is deleted with grace period 0, as a
//! kubelet does when the containers have exited. Finalizers still hold it afterwards.

use crate::cluster::Cluster;
use crate::registry::delete::DeleteOptions;
use crate::util::s;

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(crate) const WATCHES: &[&str] = &["/pods"];

/// One turn over every pod.
pub fn reconcile(cluster: &Cluster) {
    let Ok(pods) = cluster.rt("", "v1", "pods") else {
        return;
    };
    for pod in cluster.list(&pods).iter() {
        if !crate::registry::kinds::pod::deletion::awaiting_kubelet(pod) {
            continue;
        }
        let opts = DeleteOptions {
            grace_period: Some(0),
            ..Default::default()
        };
        let _ = cluster.delete(
            &pods,
            s(pod, "/metadata/namespace"),
            s(pod, "/metadata/name"),
            &opts,
        );
    }
}
