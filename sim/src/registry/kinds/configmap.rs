//! ConfigMap (v1): key rules and immutable data when `immutable` is set; its columns.

use serde_json::{Value, json};

use crate::registry::rules::{config_keys, immutable_data};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, count};
use crate::registry::table::{AGE, Col, Printer};
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

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Data", "string", 0), AGE],
            cells: |o| {
                vec![
                    json!(count(o, "data") + count(o, "binaryData")),
                    json!(age(o)),
                ]
            },
        })
    }
}
