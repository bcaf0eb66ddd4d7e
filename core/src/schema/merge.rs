//! Merging a block under what the DSL generated: the block fills only what the DSL leaves unset.
//!
//! Objects merge field by field; lists of keyed items (containers, env, ports, volumes) merge item by
//! item on their keys, the DSL's items first; any other value the DSL set stays as it is.

use super::{ListKind, Shape, TypeId};
use crate::model::{Block, BlockValue};
use crate::spanned::Name;
use serde_json::{Map, Value};

/// Merge `block` (an object of type `ty`) under `target` (the DSL's rendering of the same object). The
/// block's values move into `target` where it fills a gap, so nothing is copied.
pub fn merge_under(target: &mut Value, block: Value, ty: TypeId) {
    merge(target, block, &Shape::Object(ty));
}

/// Merge `block` (an object of type `ty`) under `target`, as [`merge_under`] does with its JSON, reading the
/// block in place: only the values that fill a gap are turned into JSON, with no intermediate copy of
/// the whole block.
/// A block still as the app binary's model wrote it is parsed once, straight into JSON, and merged by value.
pub fn merge_block_under(target: &mut Value, block: &Block, ty: TypeId) {
    if let Some(json) = block.model_json() {
        return merge_under(target, json, ty);
    }
    if let Value::Object(t) = target {
        merge_entries(t, block.entries(), &Shape::Object(ty));
    }
}

fn merge_entries(t: &mut Map<String, Value>, entries: &[(Name, BlockValue)], shape: &Shape) {
    for (k, bv) in entries {
        match t.get_mut(k.v.as_str()) {
            Some(tv) if !tv.is_null() => merge_value(tv, bv, &inner_shape(shape, &k.v)),
            _ => {
                t.insert(k.v.clone(), bv.to_json());
            }
        }
    }
}

fn merge_value(target: &mut Value, block: &BlockValue, shape: &Shape) {
    match (target, block) {
        (Value::Object(t), BlockValue::Map(m)) => merge_entries(t, m.entries(), shape),
        (Value::Array(t), BlockValue::List(_, items)) if t.is_empty() => {
            *t = items.iter().map(BlockValue::to_json).collect();
        }
        (target @ (Value::Object(_) | Value::Array(_)), block) => {
            merge(target, block.to_json(), shape)
        }
        _ => {}
    }
}

/// The shape of field `key` of a value of shape `shape`.
fn inner_shape(shape: &Shape, key: &str) -> Shape {
    match shape {
        Shape::Object(ty) => ty.field(key).map(|f| f.shape).unwrap_or(Shape::Any),
        Shape::Map(v) => **v,
        _ => Shape::Any,
    }
}

fn merge(target: &mut Value, block: Value, shape: &Shape) {
    match (target, block) {
        (Value::Object(t), Value::Object(b)) => {
            for (k, bv) in b {
                match t.get_mut(&k) {
                    Some(tv) if !tv.is_null() => merge(tv, bv, &inner_shape(shape, &k)),
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
    fn a_block_merges_in_place_as_its_json_does() {
        let dsl = json!({
            "containers": [{ "name": "web", "image": "a", "ports": [{ "containerPort": 80 }] }],
            "securityContext": { "runAsNonRoot": true },
            "volumes": [],
            "nodeSelector": { "zone": "a" },
            "hostname": null,
        });
        let block = json!({
            "containers": [{ "name": "web", "image": "b", "ports": [{ "containerPort": 80, "hostPort": 1 }] }, { "name": "side" }],
            "securityContext": { "runAsNonRoot": false, "runAsUser": 1000, "seccompProfile": { "type": "RuntimeDefault" } },
            "volumes": [{ "name": "v", "emptyDir": {} }],
            "nodeSelector": { "zone": "b", "disk": "ssd" },
            "hostname": "h",
            "priorityClassName": "high",
            "tolerations": [{ "key": "gpu" }],
        });
        let Some(BlockValue::Map(parsed)) = BlockValue::from_json(&block, crate::spanned::Loc(0))
        else {
            panic!("a map");
        };
        let mut by_json = dsl.clone();
        merge_under(&mut by_json, block, POD_SPEC);
        let mut in_place = dsl;
        merge_block_under(&mut in_place, &parsed, POD_SPEC);
        assert_eq!(in_place, by_json);
        assert_eq!(
            serde_json::to_string(&in_place).ok(),
            serde_json::to_string(&by_json).ok()
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
