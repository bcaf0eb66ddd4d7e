//! piceli-sim: a local Kubernetes API server over real HTTPS, for tests and for trying an app
//! without a cluster. Start one with [`Sim::start`]; see the crate README for what it implements.

pub mod error;
pub mod fields;
pub mod registry;
pub mod schema;
pub mod status;
pub mod store;
pub mod time;
pub mod tls;

pub use error::SimError;
