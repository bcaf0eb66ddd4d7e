//! Strategic merge patch, driven by the schema's patch strategies and merge keys: maps merge,
//! lists with a merge key merge by it, primitive lists with the merge strategy become unions, other
//! lists are replaced; `$patch`, `$retainKeys`, `$deleteFromPrimitiveList` and `$setElementOrder`
//! directives are understood.

use serde_json::{Map, Value};

use crate::registry::schema::Node;

/// Errors in a patch document.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SmpError {
    /// A `$`-directive the simulator does not know (the directive).
    #[error("unknown patch directive {0:?}")]
    Directive(String),
    /// The patch is not a JSON object.
    #[error("the patch must be a JSON object")]
    NotObject,
}

/// Applies `patch` to `original`.
pub fn apply(original: &Value, patch: &Value, node: Node<'_>) -> Result<Value, SmpError> {
    let Value::Object(p) = patch else {
        return Err(SmpError::NotObject);
    };
    Ok(merge_map(original.as_object(), p, node)?
        .map(Value::Object)
        .unwrap_or(Value::Null))
}

fn merge_map(
    orig: Option<&Map<String, Value>>,
    patch: &Map<String, Value>,
    node: Node<'_>,
) -> Result<Option<Map<String, Value>>, SmpError> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => {
            let clean = patch
                .iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect();
            return Ok(Some(clean));
        }
        Some("merge") | None => {}
        Some(other) => return Err(SmpError::Directive(other.to_string())),
    }
    let mut out = orig.cloned().unwrap_or_default();
    for (k, pv) in patch {
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(remove)) = (out.get_mut(field), pv) {
                items.retain(|i| !remove.contains(i));
            }
            continue;
        }
        if k.starts_with('$') {
            return Err(SmpError::Directive(k.clone()));
        }
        if pv.is_null() {
            out.remove(k);
            continue;
        }
        let child = node.field_or_free(k);
        let merged = match (out.get(k), pv) {
            (o, Value::Object(pm))
                if !child.map_atomic() && !matches!(o, Some(v) if !v.is_object()) =>
            {
                match merge_map(o.and_then(Value::as_object), pm, child)? {
                    Some(m) => Value::Object(m),
                    None => {
                        out.remove(k);
                        continue;
                    }
                }
            }
            (Some(Value::Array(o)), Value::Array(pl)) => merge_list(o, pl, child)?,
            (_, v) => strip(v),
        };
        out.insert(k.clone(), merged);
    }
    for (k, order) in patch {
        let (Some(field), Value::Array(order)) = (k.strip_prefix("$setElementOrder/"), order)
        else {
            continue;
        };
        let key = node
            .field_or_free(field)
            .patch_merge_key()
            .map(String::from);
        if let Some(Value::Array(items)) = out.get_mut(field) {
            reorder(items, order, key.as_deref());
        }
    }
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        out.retain(|k, _| keep.contains(&k.as_str()));
    }
    Ok(Some(out))
}

/// Puts the elements named by a `$setElementOrder` list first, in that order; the others keep their
/// relative order after them.
fn reorder(items: &mut Vec<Value>, order: &[Value], key: Option<&str>) {
    let id = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let mut rest = std::mem::take(items);
    for want in order {
        let want = id(want);
        if let Some(i) = rest.iter().position(|v| id(v) == want) {
            items.push(rest.remove(i));
        }
    }
    items.extend(rest);
}

fn merge_list(orig: &[Value], patch: &[Value], node: Node<'_>) -> Result<Value, SmpError> {
    if patch
        .iter()
        .any(|p| p.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return Ok(Value::Array(
            patch
                .iter()
                .filter(|p| p.get("$patch").is_none())
                .map(strip)
                .collect(),
        ));
    }
    let merge = node.patch_strategies().contains(&"merge");
    if !merge {
        return Ok(Value::Array(patch.iter().map(strip).collect()));
    }
    let Some(key) = node.patch_merge_key() else {
        // A set of scalars: union, in the order below.
        let mut out = orig.to_vec();
        for p in patch {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        return Ok(Value::Array(element_order(out, orig, patch, |v| v.clone())));
    };
    let mut out = orig.to_vec();
    for p in patch {
        let id = p.get(key);
        let pos = out.iter().position(|o| id.is_some() && o.get(key) == id);
        if p.get("$patch").and_then(Value::as_str) == Some("delete") {
            if let Some(i) = pos {
                out.remove(i);
            }
            continue;
        }
        match (pos, p) {
            (Some(i), Value::Object(pm)) => {
                if let Some(m) = merge_map(out[i].as_object(), pm, node.items())? {
                    out[i] = Value::Object(m);
                }
            }
            _ => out.push(strip(p)),
        }
    }
    let id = |v: &Value| v.get(key).cloned().unwrap_or(Value::Null);
    Ok(Value::Array(element_order(out, orig, patch, id)))
}

/// The order kube-apiserver gives a merged list (`normalizeElementOrder`): the elements the patch
/// names, in the patch's order, with the server-only elements inserted among them by their places
/// in the original list: each goes before the first patch element it precedes in the original, and
/// where the original does not order the two (a new element), the patch element comes first.
fn element_order(
    merged: Vec<Value>,
    orig: &[Value],
    patch: &[Value],
    id: impl Fn(&Value) -> Value,
) -> Vec<Value> {
    let patch_ids: Vec<Value> = patch.iter().map(&id).collect();
    let (mut from_patch, server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|v| patch_ids.contains(&id(v)));
    from_patch.sort_by_key(|v| patch_ids.iter().position(|p| *p == id(v)));
    let orig_ids: Vec<Value> = orig.iter().map(&id).collect();
    let place = |v: &Value| orig_ids.iter().position(|o| *o == id(v));
    let mut out = Vec::with_capacity(from_patch.len() + server_only.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        from_patch.into_iter().peekable(),
    );
    loop {
        match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => {
                let before = matches!((place(l), place(r)), (Some(a), Some(b)) if a < b);
                out.extend(if before { left.next() } else { right.next() });
            }
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (None, None) => break,
        }
    }
    out
}

/// Removes directives and nulls from a value that is inserted as a whole.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    #[test]
    fn merges_containers_and_deletes_by_key() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let orig = json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let patch = json!({"spec": {"replicas": null, "template": {"spec": {
            "$setElementOrder/containers": [{"name": "a"}],
            "containers": [{"name": "a", "image": "a:2"}, {"name": "b", "$patch": "delete"}]}}}});
        let out = apply(&orig, &patch, crate::registry::schema::Node::root(&rt)).expect("patch");
        assert_eq!(
            out,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:2"}]}}}})
        );
    }

    #[test]
    fn merged_lists_take_the_patch_order_first() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        // As kube-apiserver: a new element named by the patch comes before the server-only ones.
        let orig = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "main", "env": [{"name": "A"}, {"name": "B"}]}, {"name": "side"}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "main", "env": [{"name": "C"}]}]}}}});
        let out = apply(&orig, &patch, crate::registry::schema::Node::root(&rt)).expect("patch");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "main", "env": [{"name": "C"}, {"name": "A"}, {"name": "B"}]}, {"name": "side"}])
        );
    }

    #[test]
    fn set_element_order_reorders() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let orig =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}}}});
        let out = apply(&orig, &patch, crate::registry::schema::Node::root(&rt)).expect("patch");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b"}, {"name": "a"}])
        );
    }

    #[test]
    fn replaces_lists_without_merge_strategy() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let orig = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}}}});
        let patch =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["z"]}]}}}});
        let out = apply(&orig, &patch, crate::registry::schema::Node::root(&rt)).expect("patch");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"][0]["args"],
            json!(["z"])
        );
        let bad = json!({"$patch": "explode"});
        assert!(apply(&orig, &bad, crate::registry::schema::Node::root(&rt)).is_err());
    }
}
