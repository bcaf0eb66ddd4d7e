//! The identity of one object in plans, the journal, diffs and messages: `Kind/name` for cluster-scoped
//! kinds, `Kind/namespace/name` for namespaced ones — one type instead of keys formatted in several places.

use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// `Kind/name` or `Kind/namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The kind (`Deployment`).
    pub kind: String,
    /// The namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// A key from its parts.
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> ObjectKey {
        ObjectKey {
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The key of an object (its `kind` and `metadata`), with `namespace` when the kind is namespaced.
    pub fn of(object: &Value, namespace: Option<&str>) -> ObjectKey {
        ObjectKey::new(
            object["kind"].as_str().unwrap_or_default(),
            namespace,
            object["metadata"]["name"].as_str().unwrap_or_default(),
        )
    }

    /// The key of an object as it says itself (`metadata.namespace`, if any).
    pub fn of_object(object: &Value) -> ObjectKey {
        ObjectKey::of(object, object["metadata"]["namespace"].as_str())
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{}/{ns}/{}", self.kind, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

/// A text that is not `Kind/name` or `Kind/namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not `Kind/name` or `Kind/namespace/name`")]
pub struct BadKey(pub String);

impl FromStr for ObjectKey {
    type Err = BadKey;

    fn from_str(s: &str) -> Result<ObjectKey, BadKey> {
        let parts: Vec<&str> = s.split('/').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(BadKey(s.to_string()));
        }
        match parts.as_slice() {
            [kind, name] => Ok(ObjectKey::new(kind, None, name)),
            [kind, ns, name] => Ok(ObjectKey::new(kind, Some(ns), name)),
            _ => Err(BadKey(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_text() {
        for text in ["Namespace/shop", "Deployment/shop/web"] {
            let key: ObjectKey = text.parse().expect("key");
            assert_eq!(key.to_string(), text);
        }
        assert!("Deployment".parse::<ObjectKey>().is_err());
        assert!("a/b/c/d".parse::<ObjectKey>().is_err());
        assert!("Deployment//web".parse::<ObjectKey>().is_err());
    }

    #[test]
    fn keys_of_objects() {
        let o = serde_json::json!({"kind": "Service", "metadata": {"name": "web", "namespace": "shop"}});
        assert_eq!(ObjectKey::of_object(&o).to_string(), "Service/shop/web");
        assert_eq!(ObjectKey::of(&o, None).to_string(), "Service/web");
    }
}
