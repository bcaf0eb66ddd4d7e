//! PersistentVolumeClaim (v1): `Filesystem` volume mode and the `Pending` phase.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, set_default};
use crate::registry::strategy::Strategy;

pub struct PersistentVolumeClaim;

impl Strategy for PersistentVolumeClaim {
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        if let Some(spec) = obj(child(root, "spec")) {
            set_default(spec, "volumeMode", json!("Filesystem"));
        }
        if let Some(status) = obj(child(root, "status")) {
            set_default(status, "phase", json!("Pending"));
        }
    }
}
