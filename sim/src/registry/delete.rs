//! Deletion: preconditions, finalizers and `deletionTimestamp`, namespace deletion (its objects go
//! with it), and garbage collection of dependents by owner reference: `Background` (the default)
//! deletes them in the same transaction, `Orphan` removes their owner references, `Foreground`
//! marks the owner (`foregroundDeletion` finalizer, `deletionTimestamp`) and leaves the rest to the
//! garbage collector's turns ([`foreground_step`]): dependents first, the owner once no dependent
//! with `blockOwnerDeletion` is left.

use std::ops::ControlFlow;

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::registry::backend::Backend;
use crate::registry::object::rv_of;
use crate::status::ApiError;
use crate::storage::{EventType, Writer};

/// `DeleteOptions` as far as the simulator uses them.
#[derive(Debug, Default, Clone)]
pub struct DeleteOptions {
    /// `preconditions.uid`: delete only if the object has this uid.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`: delete only if the object is at this version.
    pub resource_version: Option<String>,
    /// `propagationPolicy: Orphan` (or `orphanDependents: true`): dependents are not deleted.
    pub orphan: bool,
    /// `propagationPolicy: Foreground`.
    pub foreground: bool,
    /// Whether the request is a dry run (`dryRun=All`): nothing is deleted.
    pub dry_run: bool,
    /// `gracePeriodSeconds` (body or query); Pods only.
    pub grace_period: Option<i64>,
    /// The request named neither `propagationPolicy` nor `orphanDependents`: the resource's default
    /// policy applies (its strategy's `orphans_by_default`). `false` for the simulator's own
    /// deletions (its controllers name Background, as kube-controller-manager's do).
    pub policy_absent: bool,
}

/// The finalizer of an object whose dependents are being deleted before it.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

fn uid_of(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Deletes one object; returns its last state.
pub fn delete(
    backend: &Backend,
    rt: &ResourceType,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Value, ApiError> {
    let rk = rt.store_key();
    let ns = if rt.namespaced { ns } else { "" };
    let strategy = rt.strategy();
    let defaulted;
    let opts = if opts.policy_absent && strategy.orphans_by_default(&rt.version) {
        defaulted = DeleteOptions {
            orphan: true,
            ..opts.clone()
        };
        &defaulted
    } else {
        opts
    };
    admit(backend, rt, ns, name, opts)?;
    let out = backend.store.write(|w| {
        let Some(obj) = w.get(&rk, ns, name)? else { return Err(ApiError::not_found(&rt.group, &rt.plural, name)) };
        if let Some(uid) = &opts.uid
            && uid != uid_of(&obj) {
                return Err(ApiError::conflict(&rt.group, &rt.kind, name, &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated", uid_of(&obj)
                )));
            }
        if let Some(rv) = &opts.resource_version
            && rv != rv_of(&obj) {
                return Err(ApiError::conflict(&rt.group, &rt.kind, name, &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified", rv_of(&obj)
                )));
            }
        if opts.dry_run {
            return Ok(obj);
        }
        if let Some(marked) = strategy.graceful_delete(w, ns, name, &obj, opts.grace_period)? {
            return Ok(marked);
        }
        if opts.foreground
            && rt.namespaced
            && obj.pointer("/metadata/deletionTimestamp").is_none()
            && has_dependents(w, ns, uid_of(&obj))?
        {
            return mark_foreground(w, &rk, ns, name, obj);
        }
        remove_object(w, rt, &rk, ns, name, obj, opts.orphan)
    })?;
    if strategy.defines_types() {
        backend.reload_crds()?;
    }
    Ok(out)
}

/// Calls the admission webhooks matching a DELETE of the stored object, outside the store
/// transaction (objects deleted by a cascade are not admitted one by one). Their warnings are dropped.
fn admit(
    backend: &Backend,
    rt: &ResourceType,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    let webhooks = backend.webhooks.current(&backend.store)?;
    if !webhooks.may_match(rt, "") {
        return Ok(());
    }
    let Some(old) = backend.store.get(&rt.store_key(), ns, name)? else {
        return Ok(());
    };
    let req = crate::registry::admission::AdmissionRequest {
        operation: "DELETE",
        resource: rt,
        namespace: ns,
        name,
        subresource: "",
        old: Some(&old),
        dry_run: opts.dry_run,
        manager: "",
        uid: crate::registry::object::new_uid(),
        propagation: Some(if opts.orphan { "Orphan" } else { "Background" }),
    };
    let mut warnings = Vec::new();
    webhooks.mutate(&backend.store, &req, None, &mut warnings)?;
    webhooks.validate(&backend.store, &req, None, &mut warnings)
}

/// Deletes (or marks for deletion, when finalizers remain) inside a transaction: the kind's own
/// deletion ([`Strategy::delete`](crate::registry::strategy::Strategy::delete)) first, then what
/// its removal takes with it.
pub fn remove_object(
    w: &mut Writer<'_>,
    rt: &ResourceType,
    rk: &str,
    ns: &str,
    name: &str,
    obj: Value,
    orphan: bool,
) -> Result<Value, ApiError> {
    let strategy = rt.strategy();
    let mut obj = match strategy.delete(w, ns, name, obj)? {
        ControlFlow::Break(last) => return Ok(last),
        ControlFlow::Continue(obj) => obj,
    };
    let has_finalizers = obj
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    if has_finalizers {
        return crate::registry::kinds::namespace::lifecycle::mark_deleting(w, rk, ns, name, obj);
    }
    let rv = w.next_rv()?;
    obj["metadata"]["resourceVersion"] = json!(rv.to_string());
    w.delete(rk, ns, name, rv, obj.clone())?;
    strategy.after_remove(w, &obj)?;
    if rt.namespaced {
        collect_dependents(w, ns, uid_of(&obj).to_string(), orphan)?;
    }
    Ok(obj)
}

/// Deletes (or orphans) objects in `ns` owned by `uid`, recursively.
fn collect_dependents(
    w: &mut Writer<'_>,
    ns: &str,
    uid: String,
    orphan: bool,
) -> Result<(), ApiError> {
    let mut pending = vec![uid];
    while let Some(owner) = pending.pop() {
        for key in w.keys_in_namespace(ns)? {
            for item in w.list(&key, Some(ns))? {
                let refs = item
                    .object
                    .pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if !refs
                    .iter()
                    .any(|r| r.get("uid").and_then(Value::as_str) == Some(owner.as_str()))
                {
                    continue;
                }
                let item_before = item.object.clone();
                let rv = w.next_rv()?;
                let mut obj = item.object;
                obj["metadata"]["resourceVersion"] = json!(rv.to_string());
                if orphan {
                    let kept: Vec<Value> = refs
                        .into_iter()
                        .filter(|r| r.get("uid").and_then(Value::as_str) != Some(owner.as_str()))
                        .collect();
                    // An emptied list is dropped (`omitempty`), as the garbage collector's patch leaves it.
                    if kept.is_empty() {
                        if let Some(m) = obj["metadata"].as_object_mut() {
                            m.remove("ownerReferences");
                        }
                    } else {
                        obj["metadata"]["ownerReferences"] = json!(kept);
                    }
                    w.put(&key, ns, &item.name, rv, obj, EventType::Modified)?;
                } else if crate::registry::kinds::namespace::lifecycle::has_finalizers(&obj) {
                    // Held by finalizers: marked, it stays until they are removed.
                    crate::registry::kinds::namespace::lifecycle::mark_deleting(
                        w,
                        &key,
                        ns,
                        &item.name,
                        item_before,
                    )?;
                } else {
                    pending.push(uid_of(&obj).to_string());
                    w.delete(&key, ns, &item.name, rv, obj)?;
                }
            }
        }
    }
    Ok(())
}

/// Whether an object is waiting for its dependents (foreground deletion).
pub fn foreground_pending(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
        && obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x == FOREGROUND_FINALIZER))
}

fn owner_refs(obj: &Value) -> &[Value] {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether any object in `ns` names `uid` as an owner.
fn has_dependents(w: &Writer<'_>, ns: &str, uid: &str) -> Result<bool, ApiError> {
    for key in w.keys_in_namespace(ns)? {
        for item in w.list(&key, Some(ns))? {
            if owner_refs(&item.object)
                .iter()
                .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Sets `deletionTimestamp` and the `foregroundDeletion` finalizer.
fn mark_foreground(
    w: &mut Writer<'_>,
    rk: &str,
    ns: &str,
    name: &str,
    mut obj: Value,
) -> Result<Value, ApiError> {
    let rv = w.next_rv()?;
    let meta = &mut obj["metadata"];
    let mut finalizers = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
        finalizers.push(json!(FOREGROUND_FINALIZER));
    }
    meta["finalizers"] = json!(finalizers);
    meta["deletionTimestamp"] = json!(crate::time::now_rfc3339());
    meta["deletionGracePeriodSeconds"] = json!(0);
    meta["resourceVersion"] = json!(rv.to_string());
    if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
        meta["generation"] = json!(g + 1);
    }
    w.put(rk, ns, name, rv, obj.clone(), EventType::Modified)?;
    Ok(obj)
}

/// What one garbage-collector step did for an owner in foreground deletion.
#[derive(Debug, Default)]
pub struct ForegroundStep {
    /// The owner is gone, or no longer waiting.
    pub done: bool,
    /// Dependents that were put in foreground deletion themselves (store key, namespace, name).
    pub marked: Vec<(String, String, String)>,
}

/// One garbage-collector step for an owner in foreground deletion: its dependents are deleted
/// (those with dependents of their own in foreground too); once none with `blockOwnerDeletion`
/// remains, the finalizer is removed and the owner deleted (when no other finalizer holds it).
pub fn foreground_step(
    backend: &Backend,
    rk: &str,
    ns: &str,
    name: &str,
) -> Result<ForegroundStep, ApiError> {
    let types = backend.registry.all();
    let type_of = |key: &str| types.iter().find(|t| t.store_key() == key).cloned();
    backend.store.write(|w| {
        let mut step = ForegroundStep::default();
        let Some(mut obj) = w.get(rk, ns, name)? else {
            step.done = true;
            return Ok(step);
        };
        if !foreground_pending(&obj) {
            step.done = true;
            return Ok(step);
        }
        let uid = uid_of(&obj).to_string();
        let mut blocked = false;
        for key in w.keys_in_namespace(ns)? {
            for item in w.list(&key, Some(ns))? {
                let Some(r) = owner_refs(&item.object)
                    .iter()
                    .find(|r| r.get("uid").and_then(Value::as_str) == Some(uid.as_str()))
                else {
                    continue;
                };
                let blocks = r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true);
                let dep = item.object;
                let still_there = if dep.pointer("/metadata/deletionTimestamp").is_some() {
                    true
                } else if has_dependents(w, ns, uid_of(&dep))? {
                    mark_foreground(w, &key, ns, &item.name, dep)?;
                    step.marked
                        .push((key.clone(), ns.to_string(), item.name.clone()));
                    true
                } else if let Some(drt) = type_of(&key) {
                    let last = remove_object(w, &drt, &key, ns, &item.name, dep, false)?;
                    last.pointer("/metadata/deletionTimestamp").is_some()
                        && w.get(&key, ns, &item.name)?.is_some()
                } else {
                    true
                };
                blocked |= blocks && still_there;
            }
        }
        if blocked {
            return Ok(step);
        }
        step.done = true;
        let left: Vec<Value> = owner_finalizers(&obj)
            .into_iter()
            .filter(|f| f != FOREGROUND_FINALIZER)
            .collect();
        if let Some(m) = obj["metadata"].as_object_mut() {
            if left.is_empty() {
                m.remove("finalizers");
            } else {
                m.insert("finalizers".into(), json!(left));
            }
        }
        match type_of(rk) {
            Some(rt) if left.is_empty() => {
                remove_object(w, &rt, rk, ns, name, obj, false)?;
            }
            _ => {
                let rv = w.next_rv()?;
                obj["metadata"]["resourceVersion"] = json!(rv.to_string());
                w.put(rk, ns, name, rv, obj, EventType::Modified)?;
            }
        }
        Ok(step)
    })
}

fn owner_finalizers(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}
