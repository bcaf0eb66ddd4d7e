//! Namespace (v1): the `kubernetes` finalizer, `Active` phase and the `kubernetes.io/metadata.name`
//! label.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, set_default};
use crate::registry::strategy::Strategy;

pub struct Namespace;

impl Strategy for Namespace {
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        if let Some(spec) = obj(child(root, "spec")) {
            set_default(spec, "finalizers", json!(["kubernetes"]));
        }
        if let Some(status) = obj(child(root, "status")) {
            set_default(status, "phase", json!("Active"));
        }
        let name = root.get("metadata").and_then(|m| m.get("name")).cloned();
        if let (Some(name), Some(meta)) = (name, root.get_mut("metadata").and_then(obj))
            && let Some(labels) = obj(child(meta, "labels"))
        {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }
}
