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

pub mod admission;
pub(crate) mod apiserver;
mod certmanager;
pub mod cli;
pub(crate) mod cluster;
pub(crate) mod controllers;
pub mod error;
pub(crate) mod go_text;
/// For fuzz targets: the request-head parsers (route, query, selectors) without a running server. Not a
/// stable API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::apiserver::fuzzing::*;
}
pub mod hooks;
pub(crate) mod kubelet;
#[cfg(test)]
mod layers;
mod outbound;
mod process;
pub(crate) mod registry;
pub(crate) mod routes;
pub mod status;
pub(crate) mod storage;
pub mod time;
pub(crate) mod util;

pub use apiserver::kubeconfig;
pub use apiserver::server::{RunningSim, Sim, SimConfig};
pub use controllers::{
    BEHAVIOR_ANNOTATION, ControllerConfig, ControllerStats, SCHEDULE_EVERY_ANNOTATION,
};
pub use error::SimError;
pub use registry::ResourceType;
