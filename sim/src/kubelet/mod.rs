//! The simulated kubelet of the one node: it runs pods (no containers: phases, readiness, restarts
//! and image pulls from the pod spec and timing), probes their mapped ports, finishes graceful
//! deletion, and serves the pod subresources a kubelet serves (exec, attach, logs, port-forward).
//! Like the controllers, it sees the cluster through their narrow handle
//! ([`crate::controllers::cluster::Cluster`]).

pub mod hooks;
pub(crate) mod image_pull;
pub(crate) mod pod;
pub(crate) mod pod_deletion;
pub(crate) mod pod_status;
pub(crate) mod pod_termination;
pub(crate) mod probe;
pub mod stream;
