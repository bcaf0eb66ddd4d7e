//! Test support shared by hello's tests and, by path, the fleet tests: the commit-exact fault trials.

pub mod cluster_state;
pub mod fault_trials;
