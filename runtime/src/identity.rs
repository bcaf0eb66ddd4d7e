//! The identity of one object in plans, the journal, diffs and messages: [`ObjectKey`] (`Kind/name` for
//! cluster-scoped kinds, `Kind/namespace/name` for namespaced ones), [`ObjectRef`] (the key with its
//! apiVersion, what a request needs) and the [`GroupVersionKind`] discovery takes — typed values instead of
//! keys formatted and JSON probes built in several places.

pub use kube::core::GroupVersionKind;
use serde::{Deserialize, Serialize};
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

/// The group-version-kind of `apiVersion` and `kind` (`v1` is the core group's `""`/`v1`).
pub fn gvk(api_version: &str, kind: &str) -> GroupVersionKind {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    GroupVersionKind::gvk(group, version, kind)
}

/// The group-version-kind an object says it is (empty parts when it says nothing).
pub fn gvk_of(object: &Value) -> GroupVersionKind {
    gvk(
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
    )
}

/// One object, as plans, their `external` requirements and pruning name it: its key and apiVersion.
/// Serialized flat (`apiVersion`, `kind`, `namespace`, `name`), as the types that hold it always were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// apiVersion.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// kind.
    pub kind: String,
    /// Namespace (namespaced kinds).
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// A reference from its parts.
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> ObjectRef {
        ObjectRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The object's key (its identity without the apiVersion).
    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(&self.kind, self.namespace.as_deref(), &self.name)
    }

    /// Its group-version-kind, for discovery.
    pub fn gvk(&self) -> GroupVersionKind {
        gvk(&self.api_version, &self.kind)
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.key().fmt(f)
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

/// A key equals its text (`key == "Deployment/shop/web"`).
impl PartialEq<&str> for ObjectKey {
    fn eq(&self, text: &&str) -> bool {
        let mut parts = text.split('/');
        let (kind, first, second) = (parts.next(), parts.next(), parts.next());
        let (namespace, name) = match second {
            Some(name) => (first, Some(name)),
            None => (None, first),
        };
        parts.next().is_none()
            && kind == Some(self.kind.as_str())
            && namespace == self.namespace.as_deref()
            && name == Some(self.name.as_str())
    }
}

/// Written as its text (`Kind/namespace/name`), as outputs and the journal show it.
impl Serialize for ObjectKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ObjectKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ObjectKey, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
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
        let key: ObjectKey = "Deployment/shop/web".parse().expect("key");
        let json = serde_json::to_value(&key).expect("json");
        assert_eq!(json, "Deployment/shop/web");
        assert_eq!(
            serde_json::from_value::<ObjectKey>(json).expect("back"),
            key
        );
        assert!(serde_json::from_value::<ObjectKey>(serde_json::json!("x")).is_err());
        assert!(key == "Deployment/shop/web");
        assert!(
            key != "Deployment/web" && key != "Deployment/shop/web/x" && key != "Service/shop/web"
        );
        assert!(ObjectKey::new("Namespace", None, "shop") == "Namespace/shop");
    }

    #[test]
    fn keys_of_objects() {
        let o = serde_json::json!({"kind": "Service", "metadata": {"name": "web", "namespace": "shop"}});
        assert_eq!(ObjectKey::of_object(&o).to_string(), "Service/shop/web");
        assert_eq!(ObjectKey::of(&o, None).to_string(), "Service/web");
    }

    #[test]
    fn group_version_kinds_of_core_and_grouped_kinds() {
        let core = gvk("v1", "Service");
        assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
        let apps = gvk_of(&serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment"}));
        assert_eq!(
            (
                apps.group.as_str(),
                apps.version.as_str(),
                apps.kind.as_str()
            ),
            ("apps", "v1", "Deployment")
        );
        let r = ObjectRef::new("apps/v1", "Deployment", Some("shop"), "web");
        assert_eq!(
            (r.key().to_string(), r.gvk()),
            ("Deployment/shop/web".to_string(), apps)
        );
    }
}
