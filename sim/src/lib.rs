//! piceli-sim: a local Kubernetes API server over real HTTPS, for tests and for trying an app
//! without a cluster.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let sim = piceli_sim::Sim::start(piceli_sim::SimConfig::default())?;
//! let client = sim.client()?; // a kube::Client for this cluster only
//! println!("kubectl --kubeconfig {}", sim.kubeconfig_path().display());
//! # drop(client); Ok(()) }
//! ```

mod accept;
pub mod admission;
mod api;
pub mod apiserver;
pub mod app;
mod certmanager;
pub mod cli;
mod cli_route;
mod cluster_defaults;
pub mod controllers;
pub mod crd;
mod crd_types;
pub mod defaults;
pub mod delete;
pub mod discovery;
pub mod error;
pub mod field_labels;
pub mod fields;
pub mod hooks;
pub mod http;
pub mod kubeconfig;
mod namespace_deletion;
pub mod object;
pub mod openapi;
mod pod_deletion;
mod pod_status;
mod process;
pub mod proto;
mod proxy;
mod query;
pub mod registry;
pub mod router;
pub mod routes;
pub mod rules;
pub mod schema;
mod scratch_dir;
mod secret_rules;
pub mod selectors;
mod server;
pub mod smp;
pub mod status;
pub mod store;
pub mod stream;
pub mod table;
pub mod time;
pub mod tls;
pub mod validate;

pub use error::SimError;
pub use server::{RunningSim, Sim, SimConfig};
