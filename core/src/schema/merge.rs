//! Merging a block under what the DSL generated: the block fills only what the DSL leaves unset.
//!
//! Objects merge field by field; lists of keyed items (containers, env, ports, volumes) merge item by
//! item on their keys, the DSL's items first; any other value the DSL set stays as it is.

use super::{ListKind, Shape, TypeId};
use serde_json::Value;

/// Merge `block` (an object of type `ty`) under `target` (the DSL's rendering of the same object). The
/// block's values move into `target` where it fills a gap, so nothing is copied.
pub fn merge_under(target: &mut Value, block: Value, ty: TypeId) {
    merge(target, block, &Shape::Object(ty));
}

fn merge(target: &mut Value, block: Value, shape: &Shape) {
    match (target, block) {
        (Value::Object(t), Value::Object(b)) => {
            for (k, bv) in b {
                let inner = match shape {
                    Shape::Object(ty) => ty.field(&k).map(|f| f.shape).unwrap_or(Shape::Any),
                    Shape::Map(v) => **v,
                    _ => Shape::Any,
                };
                match t.get_mut(&k) {
                    Some(tv) if !tv.is_null() => merge(tv, bv, &inner),
                    _ => {
                        t.insert(k, bv);
                    }
                }
            }
        }
        (Value::Array(t), Value::Array(b)) if t.is_empty() => *t = b,
        (Value::Array(t), Value::Array(b)) => {
            if let Shape::List(item, ListKind::Map(keys)) = shape {
                for bv in b {
                    match t.iter_mut().find(|tv| same_item(tv, &bv, keys)) {
                        Some(tv) => merge(tv, bv, item),
                        None => t.push(bv),
                    }
                }
            }
        }
        _ => {}
    }
}

/// Two items of a keyed list are the same when every key agrees (`protocol` defaults to TCP).
fn same_item(a: &Value, b: &Value, keys: &[&str]) -> bool {
    keys.iter().all(|k| match (a.get(*k), b.get(*k)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => true,
        (Some(v), None) | (None, Some(v)) => *k == "protocol" && v.as_str() == Some("TCP"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CONTAINER, POD_SPEC};
    use serde_json::json;

    #[test]
    fn the_dsl_wins_and_the_block_fills_the_rest() {
        let mut pod = json!({
            "containers": [{ "name": "web", "image": "a" }],
            "securityContext": { "runAsNonRoot": true },
        });
        merge_under(
            &mut pod,
            json!({
                "containers": [{ "name": "web", "image": "b", "tty": true }, { "name": "side", "image": "c" }],
                "securityContext": { "runAsNonRoot": false, "runAsUser": 1000 },
                "priorityClassName": "high",
            }),
            POD_SPEC,
        );
        assert_eq!(
            pod,
            json!({
                "containers": [{ "name": "web", "image": "a", "tty": true }, { "name": "side", "image": "c" }],
                "securityContext": { "runAsNonRoot": true, "runAsUser": 1000 },
                "priorityClassName": "high",
            })
        );
    }

    #[test]
    fn ports_match_on_number_and_default_protocol() {
        let mut c = json!({ "name": "web", "ports": [{ "containerPort": 80, "name": "http" }], "args": ["x"] });
        merge_under(
            &mut c,
            json!({ "ports": [{ "containerPort": 80, "protocol": "TCP", "hostPort": 8080 }, { "containerPort": 81 }], "args": ["y"] }),
            CONTAINER,
        );
        assert_eq!(
            c,
            json!({ "name": "web", "ports": [{ "containerPort": 80, "name": "http", "protocol": "TCP", "hostPort": 8080 }, { "containerPort": 81 }], "args": ["x"] })
        );
    }
}
