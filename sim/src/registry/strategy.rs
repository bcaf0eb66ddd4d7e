//! The per-kind behaviour of the registry, as kube-apiserver's `rest.RESTCreateStrategy` /
//! `RESTUpdateStrategy` / `RESTDeleteStrategy` and `TableConvertor`: defaulting, validation on create
//! and update, whether a kind counts `metadata.generation`, what the server fills in on create, the
//! columns `kubectl get` prints, and how objects are deleted. One implementation per built-in kind
//! lives in `kinds/`; [`for_kind`] finds it.

use std::ops::ControlFlow;

use serde_json::{Map, Value};

use crate::registry::ResourceType;
use crate::registry::table::Printer;
use crate::registry::validate::NameRule;
use crate::status::{ApiError, Cause};
use crate::storage::Writer;

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

    /// JSON pointers of the fields the registry allocates when a create leaves them out (a Service's
    /// cluster IPs): filled in by the defaults, but, as kube-apiserver allocates them after its field
    /// manager ran, owned by no one.
    fn allocated(&self) -> &'static [&'static str] {
        &[]
    }

    /// What an update keeps from the stored object whatever the request says (a Namespace's
    /// `spec.finalizers`, which only the `finalize` subresource changes).
    fn prepare_update(&self, _old: &Value, _new: &mut Value) {}

    /// Status the server itself derives on every write (a CRD's conditions).
    fn derive_status(&self, _object: &mut Value) {}

    /// Whether a create without a name or `generateName` is named by a new UUID rather than refused
    /// (a LimitRange).
    fn names_itself(&self) -> bool {
        false
    }

    /// The rule the kind's names follow (DNS-1123 subdomain unless the kind says otherwise).
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Causes for an object the real server rejects as Invalid (after defaulting).
    fn validate(&self, _object: &Value, _out: &mut Vec<Cause>) {}

    /// Causes for an update the real server rejects (immutable fields).
    fn validate_update(&self, _old: &Value, _new: &Value, _out: &mut Vec<Cause>) {}

    /// How `kubectl get` prints the kind (its `TableConvertor`); `None` for Name and Age (custom
    /// resources print their CRD's columns instead).
    fn printer(&self) -> Option<Printer> {
        None
    }

    /// Whether a DELETE naming no propagation policy orphans the object's dependents in API version
    /// `version` (the strategy's `DefaultGarbageCollectionPolicy`); otherwise Background.
    fn orphans_by_default(&self, _version: &str) -> bool {
        false
    }

    /// Whether a finished DELETE answers with the object (the stores with `ReturnDeletedObject`)
    /// rather than a `Status` of `Success`; a deletion still pending (finalizers, grace) always
    /// returns the object.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// Graceful deletion (`CheckGracefulDelete`): marks the stored `object` for deletion after a
    /// grace period (`requested`: the request's `gracePeriodSeconds`) and returns it as stored, or
    /// `None` when it is to be deleted now.
    fn graceful_delete(
        &self,
        _w: &mut Writer<'_>,
        _ns: &str,
        _name: &str,
        _object: &Value,
        _requested: Option<i64>,
    ) -> Result<Option<Value>, ApiError> {
        Ok(None)
    }

    /// A kind that deletes its objects its own way (a custom `REST.Delete`, as the Namespace's):
    /// `Break` with the object's last state, or `Continue` with the object for the generic path
    /// (finalizers, then removal and garbage collection of dependents).
    fn delete(
        &self,
        _w: &mut Writer<'_>,
        _ns: &str,
        _name: &str,
        object: Value,
    ) -> Result<ControlFlow<Value, Value>, ApiError> {
        Ok(ControlFlow::Continue(object))
    }

    /// What removing an object takes with it, in the same transaction (a CRD: every object of its
    /// kind).
    fn after_remove(&self, _w: &mut Writer<'_>, _object: &Value) -> Result<(), ApiError> {
        Ok(())
    }

    /// Whether nothing holds an object marked for deletion any longer, so that a write removing
    /// its last finalizer deletes it (no `metadata.finalizers` left; a Namespace's own too).
    fn finalized(&self, object: &Value) -> bool {
        object
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|f| f.is_empty())
    }

    /// Whether writing or deleting objects of this kind changes the served types (CRDs): the
    /// registry reloads them after the write.
    fn defines_types(&self) -> bool {
        false
    }
    /// Whether a list of this kind is read from the store in pages (`limit`, `continue`) at a
    /// `resourceVersion`; a kind whose storage is no store (ComponentStatus) reads only the selectors.
    fn lists_from_store(&self) -> bool {
        true
    }
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

impl ResourceType {
    /// The strategy of this type's kind.
    pub(crate) fn strategy(&self) -> &'static dyn Strategy {
        for_kind(&self.group, &self.kind, self.crd)
    }
}

/// The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}
