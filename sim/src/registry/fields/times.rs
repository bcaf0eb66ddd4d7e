//! Timestamps as the apiserver stores them: a built-in object's `metav1.Time` fields decoded and
//! re-encoded in UTC with whole seconds (`…41.821675+00:00` → `…41Z`), `metav1.MicroTime` fields
//! (an Event's `eventTime`, a Lease's `renewTime`) with six fraction digits.

use serde_json::Value;

use crate::registry::schema::{Node, definitions};
use crate::time::{normalize_micro, normalize_rfc3339};

const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

/// Rewrites every timestamp of `value` (at schema position `node`) in its canonical form. Values
/// that do not parse are left for validation.
pub fn normalize(value: &mut Value, node: Node<'_>) {
    if node.is_free() {
        return;
    }
    match value {
        Value::String(s) if node.format() == Some("date-time") => {
            let micro = definitions()
                .get(MICRO_TIME)
                .is_some_and(|d| node.is_definition(d));
            let canonical = if micro {
                normalize_micro(s)
            } else {
                normalize_rfc3339(s)
            };
            if let Some(c) = canonical {
                *s = c;
            }
        }
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if let Some(child) = node.field(k) {
                    normalize(v, child);
                }
            }
        }
        Value::Array(items) => {
            let item = node.items();
            for v in items {
                normalize(v, item);
            }
        }
        _ => {}
    }
}
