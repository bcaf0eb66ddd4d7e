//! Pure JSON helpers the controllers and the kubelet share: fields of objects, owner references;
//! what reads or writes the cluster is on the handle ([`crate::cluster::Cluster`]).

use serde_json::{Value, json};

/// `objects` (those `keep` accepts) by the uid of their controller owner: found once per turn, not
/// searched once per owner (which made a turn quadratic in the number of objects).
pub fn by_controller(
    objects: &[std::sync::Arc<Value>],
    keep: impl Fn(&Value) -> bool,
) -> std::collections::HashMap<&str, Vec<&Value>> {
    let mut out: std::collections::HashMap<&str, Vec<&Value>> = std::collections::HashMap::new();
    for o in objects.iter().filter(|o| keep(o)) {
        if let Some(owner) = controller_uid(o) {
            out.entry(owner).or_default().push(&**o);
        }
    }
    out
}

/// A string at a JSON pointer, or "".
pub fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// An integer at a JSON pointer, or `default`.
pub fn i(v: &Value, ptr: &str, default: i64) -> i64 {
    v.pointer(ptr).and_then(Value::as_i64).unwrap_or(default)
}

/// `metadata.uid`.
pub fn uid(v: &Value) -> &str {
    s(v, "/metadata/uid")
}

/// Whether the object is being deleted.
pub fn terminating(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some()
}

/// The uid of the object's controller owner reference, if any.
pub fn controller_uid(v: &Value) -> Option<&str> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// An owner reference to `owner` marking it as the controller.
pub fn owner_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": s(owner, "/apiVersion"),
        "kind": s(owner, "/kind"),
        "name": s(owner, "/metadata/name"),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}
