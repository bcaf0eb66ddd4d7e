//! The end-to-end tests' cluster fixtures, shared by every crate's integration tests.
//!
//! [`Cluster::start`] gives a test its cluster: a fresh in-process local cluster (`piceli sim`) by
//! default, or — when `PICELI_REAL_KUBECONFIG` names a kubeconfig — a real Kubernetes control plane
//! (`scripts/real-cluster.sh start DIR` writes one; kind, k3d or a cloud test cluster work the same way).
//! The same test code runs on both. On a real cluster the tests of every process take turns (a file
//! lock), and each starts from a cluster with no test namespaces or test-made cluster objects left.
//!
//! A test that needs what only the local cluster has (its kubelet's port-forward, exec and logs, fault
//! hooks into its storage) calls [`Cluster::start_sim`] and says so in its name or doc comment.
//!
//! Beside the clusters: [`kubectl`] (the real kubectl as a test runs it: explicit kubeconfig, its own
//! cache) and [`process`] (free ports, children stopped with SIGTERM, polling), shared by every crate's
//! tests instead of copies in each; [`apps`] (the one target directory and profile of the app crates the
//! tests build with cargo, so the dependency tree is compiled once for all of them).

pub mod apps;
mod cluster;
pub mod kubectl;
pub mod process;
mod real;

pub use cluster::{Cluster, REAL_KUBECONFIG};
pub use real::RealCluster;
