//! Secret (v1): `Opaque` type, `stringData` folded into `data`, key and size rules, immutable type
//! and (when `immutable`) data; its columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::set_default;
use crate::registry::rules::{config_keys, immutable_data};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, count, s};
use crate::registry::table::{AGE, Col, Printer};
use crate::status::Cause;

pub struct Secret;

impl Strategy for Secret {
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        set_default(root, "type", json!("Opaque"));
        // stringData is write-only: it is folded into data (base64) and not stored.
        if let Some(Value::Object(plain)) = root.remove("stringData") {
            use base64::Engine;
            let data = root.entry("data").or_insert_with(|| json!({}));
            if let Some(data) = data.as_object_mut() {
                for (k, v) in plain {
                    let text = v.as_str().unwrap_or_default().to_string();
                    data.insert(
                        k,
                        json!(base64::engine::general_purpose::STANDARD.encode(text)),
                    );
                }
            }
        }
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        config_keys(object, "data", out);
        out.extend(crate::registry::secret_rules::check(object));
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        out.extend(crate::registry::secret_rules::check_update(old, new));
        immutable_data(old, new, out);
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Type", "string", 0),
                Col("Data", "integer", 0),
                AGE,
            ],
            cells: |o| vec![json!(s(o, "/type")), json!(count(o, "data")), json!(age(o))],
        })
    }
}
