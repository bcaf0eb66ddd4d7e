//! Namespace deletion as kube-apiserver and the namespace controller do it: the Namespace gets a
//! `deletionTimestamp` and phase `Terminating`; every object in it is deleted — those held by
//! finalizers only get a `deletionTimestamp` and stay until their finalizers are removed; once the
//! namespace is empty the `kubernetes` entry of `spec.finalizers` is removed and, without
//! `metadata.finalizers` left, the Namespace goes.

use serde_json::{Value, json};

use crate::status::ApiError;
use crate::storage::{EventType, Writer};

/// The namespace controller's entry in `spec.finalizers`.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an object has `metadata.finalizers`.
pub fn has_finalizers(obj: &Value) -> bool {
    !strings(obj.pointer("/metadata/finalizers")).is_empty()
}

/// Puts `deletionTimestamp` on an object held by finalizers (once); returns it as stored.
pub fn mark_deleting(
    w: &mut Writer<'_>,
    rk: &str,
    ns: &str,
    name: &str,
    mut obj: Value,
) -> Result<Value, ApiError> {
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(obj);
    }
    let rv = w.next_rv()?;
    obj["metadata"]["deletionTimestamp"] = json!(crate::time::now_rfc3339());
    obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    obj["metadata"]["resourceVersion"] = json!(rv.to_string());
    if let Some(g) = obj["metadata"].get("generation").and_then(Value::as_i64) {
        obj["metadata"]["generation"] = json!(g + 1);
    }
    w.put(rk, ns, name, rv, obj.clone(), EventType::Modified)?;
    Ok(obj)
}

/// Deletes what is in `ns` (marking what finalizers hold); returns how many objects remain.
fn empty(w: &mut Writer<'_>, ns: &str) -> Result<usize, ApiError> {
    let mut remaining = 0;
    for key in w.keys_in_namespace(ns)? {
        for item in w.list(&key, Some(ns))? {
            if has_finalizers(&item.object) {
                mark_deleting(w, &key, ns, &item.name, item.object)?;
                remaining += 1;
                continue;
            }
            let rv = w.next_rv()?;
            let mut last = item.object;
            last["metadata"]["resourceVersion"] = json!(rv.to_string());
            w.delete(&key, ns, &item.name, rv, last)?;
        }
    }
    Ok(remaining)
}

/// The namespace's status while objects remain, with the conditions the namespace controller sets.
fn terminating_status(remaining: usize) -> Value {
    let now = crate::time::now_rfc3339();
    let mut conditions = Vec::new();
    if remaining > 0 {
        conditions.push(
            json!({"type": "NamespaceContentRemaining", "status": "True",
            "reason": "SomeResourcesRemain", "lastTransitionTime": now,
            "message": format!("Some resources are remaining: {remaining} objects remain")}),
        );
        conditions.push(
            json!({"type": "NamespaceFinalizersRemaining", "status": "True",
            "reason": "SomeFinalizersRemain", "lastTransitionTime": now,
            "message": "Some content in the namespace has finalizers remaining"}),
        );
    }
    json!({"phase": "Terminating", "conditions": conditions})
}

/// One step of deleting the Namespace `name` (stored as `ns_obj`): marks it, empties it, and
/// finalizes it when nothing is left. Returns the Namespace's last state.
pub fn step(w: &mut Writer<'_>, name: &str, mut ns_obj: Value) -> Result<Value, ApiError> {
    let remaining = empty(w, name)?;
    if ns_obj.pointer("/metadata/deletionTimestamp").is_none() {
        ns_obj["metadata"]["deletionTimestamp"] = json!(crate::time::now_rfc3339());
        ns_obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    }
    if remaining == 0 {
        let spec_finalizers: Vec<String> = strings(ns_obj.pointer("/spec/finalizers"))
            .into_iter()
            .filter(|f| f != NAMESPACE_FINALIZER)
            .collect();
        ns_obj["spec"]["finalizers"] = json!(spec_finalizers);
        if spec_finalizers.is_empty() && !has_finalizers(&ns_obj) {
            let rv = w.next_rv()?;
            ns_obj["metadata"]["resourceVersion"] = json!(rv.to_string());
            w.delete("/namespaces", "", name, rv, ns_obj.clone())?;
            return Ok(ns_obj);
        }
    }
    let status = terminating_status(remaining);
    if ns_obj.get("status") != Some(&status) || remaining == 0 {
        ns_obj["status"] = status;
        let rv = w.next_rv()?;
        ns_obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        w.put(
            "/namespaces",
            "",
            name,
            rv,
            ns_obj.clone(),
            EventType::Modified,
        )?;
    }
    Ok(ns_obj)
}

/// After an object of `ns` went (its last finalizer removed): finishes the namespace's deletion
/// when it is terminating and now empty.
pub fn object_gone(w: &mut Writer<'_>, ns: &str) -> Result<(), ApiError> {
    if ns.is_empty() {
        return Ok(());
    }
    let Some(ns_obj) = w.get("/namespaces", "", ns)? else {
        return Ok(());
    };
    if ns_obj.pointer("/metadata/deletionTimestamp").is_none() {
        return Ok(());
    }
    step(w, ns, ns_obj).map(|_| ())
}

/// Whether a Namespace may leave the store: being deleted, with no spec or metadata finalizers.
pub fn may_go(ns_obj: &Value) -> bool {
    strings(ns_obj.pointer("/spec/finalizers")).is_empty() && !has_finalizers(ns_obj)
}

/// `metadata.finalizers` may not grow on an object being deleted (`ValidateNoNewFinalizers`).
pub fn no_new_finalizers(old: &Value, new: &Value) -> Vec<crate::status::Cause> {
    if old.pointer("/metadata/deletionTimestamp").is_none() {
        return Vec::new();
    }
    let before = strings(old.pointer("/metadata/finalizers"));
    let mut extra: Vec<String> = strings(new.pointer("/metadata/finalizers"))
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if extra.is_empty() {
        return Vec::new();
    }
    extra.sort();
    extra.dedup();
    let shown: Vec<String> = extra.iter().map(|f| format!("{f:?}")).collect();
    vec![crate::status::Cause {
        reason: "FieldValueForbidden".into(),
        message: format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            shown.join(", ")
        ),
        field: "metadata.finalizers".into(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizers_cannot_be_added_while_deleting() {
        let old = json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["a"]}});
        let new = json!({"metadata": {"finalizers": ["a", "b"]}});
        let causes = no_new_finalizers(&old, &new);
        assert_eq!(
            causes[0].message,
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b\"}"
        );
        assert!(no_new_finalizers(&old, &json!({"metadata": {}})).is_empty());
        let live = json!({"metadata": {"finalizers": ["a"]}});
        assert!(no_new_finalizers(&live, &new).is_empty());
    }
}
