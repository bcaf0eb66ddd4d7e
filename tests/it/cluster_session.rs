//! The session options an end-to-end suite opens against its test cluster (the local one or the real
//! control plane): the cluster's kubeconfig and context, the test's own state directory.

use piceli::runtime::engine::session::SessionOptions;
use piceli::runtime::engine::target::ConnectOptions;
use piceli_test_support::Cluster;

/// Options for a session on `cluster` with its state in `state`; everything else as default.
pub fn options(cluster: &Cluster, state: &std::path::Path) -> SessionOptions {
    SessionOptions {
        connect: ConnectOptions {
            kubeconfig: Some(cluster.kubeconfig_path().to_path_buf()),
            context: Some(cluster.context().to_string()),
        },
        state_dir: Some(state.to_path_buf()),
        ..SessionOptions::default()
    }
}
