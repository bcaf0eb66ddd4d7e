//! The engine: plan what would change (server-side-apply dry runs), approve it by hash, apply exactly
//! that plan with preconditions and a journal.

pub mod apply;
pub mod approved;
pub mod cluster_error;
pub mod conflicts;
pub mod crd_versions;
pub mod deploy;
pub mod diff;
pub mod env_file;
pub mod error;
mod error_reasons;
pub mod externals;
pub mod first_apply;
pub mod flags;
pub mod generate;
pub mod hash;
pub mod helm;
pub mod immutable;
pub mod listed;
pub mod lock;
pub mod owned;
pub mod owners;
pub mod plan;
pub mod ready;
pub mod record;
pub mod replace;
pub mod resources;
pub mod rotate;
pub mod secrets;
pub mod selectors;
pub mod session;
pub mod stages;
pub mod state;
pub mod target;

pub use error::EngineError;
