//! Two pieces of the write path that kube-apiserver shapes or words its own way: what a write to a
//! subresource owning part of an object keeps, and the decoder's error for a body of another kind.

use serde_json::{Value, json};

use crate::registry::ResourceType;

/// What a write to a subresource that owns part of an object keeps of the request: the stored object
/// with only that part taken from `body` (`pods/ephemeralcontainers`: `spec.ephemeralContainers`;
/// `pods/resize`: each container's `resources` and `resizePolicy`; `certificatesigningrequests/approval`:
/// `status.conditions`).
pub(super) fn subresource_part(sub: &str, old: &Value, body: &Value) -> Value {
    let mut n = old.clone();
    let take = |at: &str, n: &mut Value| {
        let (parent, key) = at.rsplit_once('/').unwrap_or(("", at));
        let value = body.pointer(at).cloned();
        if let Some(Value::Object(m)) = n.pointer_mut(parent) {
            match value {
                Some(v) => {
                    m.insert(key.to_string(), v);
                }
                None => {
                    m.remove(key);
                }
            }
        }
    };
    match sub {
        "ephemeralcontainers" => take("/spec/ephemeralContainers", &mut n),
        "approval" => {
            if n.get("status").is_none() {
                n["status"] = json!({});
            }
            take("/status/conditions", &mut n);
        }
        _ => {
            let wanted: Vec<Value> = body
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(Value::Array(cs)) = n.pointer_mut("/spec/containers") {
                for c in cs.iter_mut() {
                    let Some(w) = wanted.iter().find(|w| w.get("name") == c.get("name")) else {
                        continue;
                    };
                    for key in ["resources", "resizePolicy"] {
                        match (w.get(key), c.as_object_mut()) {
                            (Some(v), Some(m)) => {
                                m.insert(key.into(), v.clone());
                            }
                            (None, Some(m)) => {
                                m.remove(key);
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    n
}

/// The decoder's error for a body of another kind: for a built-in kind, the scheme's failed
/// conversion (`Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to
/// (core.ConfigMap): unknown conversion`).
/// A kind the scheme does not have in the body's group-version is the scheme's own error instead
/// (`no kind "Secret" is registered for version "apps/v1"`); `registered` says whether it has it.
pub(super) fn kind_mismatch(
    rt: &ResourceType,
    body: &Value,
    kind: &str,
    registered: bool,
) -> String {
    let api_version = body
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| rt.api_version());
    let version = api_version.rsplit('/').next().unwrap_or(&api_version);
    if rt.crd {
        return format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            rt.kind
        );
    }
    if !registered {
        return format!(
            "{kind} in version {version:?} cannot be handled as a {}: no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/runtime/scheme.go:110\"",
            rt.kind
        );
    }
    // The internal package of the group (`core` for the legacy group and for events.k8s.io).
    let internal = match rt.group.as_str() {
        "" | "events.k8s.io" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    format!(
        "{kind} in version {version:?} cannot be handled as a {}: converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
        rt.kind, rt.kind
    )
}
