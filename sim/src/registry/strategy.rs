//! The per-kind behaviour of the registry, as kube-apiserver's `rest.RESTCreateStrategy` /
//! `RESTUpdateStrategy`: defaulting, validation on create and update, whether a kind counts
//! `metadata.generation`, and what the server fills in on create. One implementation per built-in
//! kind lives in `kinds/`; [`for_kind`] finds it.

use serde_json::{Map, Value};

use crate::status::Cause;

/// What the generic write path asks of a kind.
pub trait Strategy: Sync {
    /// Whether objects of this kind carry `metadata.generation` (bumped on spec changes).
    fn has_generation(&self) -> bool {
        false
    }

    /// Fills in the defaults the real server sets, on every create and update. `cluster_ip`
    /// allocates a Service IP when one is needed.
    fn default(&self, _object: &mut Map<String, Value>, _cluster_ip: &mut dyn FnMut() -> String) {}

    /// What only a create fills in, after defaulting (a Pod's initial status, a Job's selector).
    fn prepare_create(&self, _object: &mut Value) {}

    /// Status the server itself derives on every write (a CRD's conditions).
    fn derive_status(&self, _object: &mut Value) {}

    /// Causes for an object the real server rejects as Invalid (after defaulting).
    fn validate(&self, _object: &Value, _out: &mut Vec<Cause>) {}

    /// Causes for an update the real server rejects (immutable fields).
    fn validate_update(&self, _old: &Value, _new: &Value, _out: &mut Vec<Cause>) {}
}

/// A kind with no rules of its own.
pub struct Plain;
impl Strategy for Plain {}

/// A kind whose only rule is that it counts `metadata.generation` (and every custom resource).
pub struct Generational;
impl Strategy for Generational {
    fn has_generation(&self) -> bool {
        true
    }
}

/// The strategy of `kind` in API group `group` (`""` for the core group); `crd` for custom resources.
pub fn for_kind(group: &str, kind: &str, crd: bool) -> &'static dyn Strategy {
    if crd {
        return &Generational;
    }
    super::kinds::lookup(group, kind).unwrap_or(&Plain)
}

/// The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}
