//! ConfigMap (v1): key rules and immutable data when `immutable` is set.

use serde_json::Value;

use crate::registry::rules::{config_keys, immutable_data};
use crate::registry::strategy::Strategy;
use crate::status::Cause;

pub struct ConfigMap;

impl Strategy for ConfigMap {
    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        config_keys(object, "data", out);
        config_keys(object, "binaryData", out);
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        immutable_data(old, new, out);
    }
}
