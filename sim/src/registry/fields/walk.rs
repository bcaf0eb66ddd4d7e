//! Schema-guided walks over objects: the field set an applied configuration owns, the structured
//! merge of a configuration into a live object, the paths an update changed, and path removal.

use serde_json::{Map, Value};

use super::path::{FieldSet, Path, Step, key_of};
use crate::registry::schema::{ListKind, Node};

/// Whether the field at `path` is there even in a zero-valued Go object, so an update that sets it
/// never adds the field itself, only what is under it (structured-merge-diff compares typed
/// objects): structs nested by value, and slices without `omitempty`. Pointers, maps and optional
/// slices are absent until set, and are then members of their own (`.` in `fieldsV1`).
fn zero_present(path: &[Step], node: &Node<'_>) -> bool {
    const BY_VALUE_STRUCTS: &[&str] = &[
        "metadata",
        "spec",
        "status",
        "template",
        "strategy",
        "updateStrategy",
        "jobTemplate",
        "resources",
        "names",
        "acceptedNames",
    ];
    const NOT_OMITEMPTY_LISTS: &[&str] = &["containers", "rules"];
    let Some(Step::Field(key)) = path.last() else {
        return false;
    };
    if node.is_struct() {
        BY_VALUE_STRUCTS.contains(&key.as_str())
    } else {
        NOT_OMITEMPTY_LISTS.contains(&key.as_str()) && node.type_name() == Some("array")
    }
}

fn is_atomic_object(node: &Node<'_>) -> bool {
    node.map_atomic()
}

/// Lists keyed by `protocol` default it to TCP (as the real server does before computing keys).
pub fn default_list_keys(value: &mut Value, node: Node<'_>) {
    match value {
        Value::Object(m) => {
            if is_atomic_object(&node) {
                return;
            }
            for (k, v) in m.iter_mut() {
                let child = node.field_or_free(k);
                default_list_keys(v, child);
            }
        }
        Value::Array(items) => {
            let kind = node.list_kind();
            let items_node = node.items();
            for item in items.iter_mut() {
                if let (ListKind::Map(keys), Value::Object(m)) = (&kind, &mut *item)
                    && keys.iter().any(|k| k == "protocol")
                    && !m.contains_key("protocol")
                {
                    m.insert("protocol".into(), Value::String("TCP".into()));
                }
                default_list_keys(item, items_node);
            }
        }
        _ => {}
    }
}

/// The fields an applied configuration sets: its leaves, atomic values, and list elements.
pub fn owned_set(config: &Value, node: Node<'_>) -> FieldSet {
    let mut set = FieldSet::new();
    collect(config, node, &mut Vec::new(), &mut set);
    set
}

fn collect(v: &Value, node: Node<'_>, path: &mut Path, set: &mut FieldSet) {
    match v {
        Value::Object(m) if !m.is_empty() && !is_atomic_object(&node) => {
            for (k, child) in m {
                path.push(Step::Field(k.clone()));
                collect(child, node.field_or_free(k), path, set);
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => match node.list_kind() {
            ListKind::Atomic => {
                set.insert(path.clone());
            }
            ListKind::Set => {
                for item in items {
                    if let Ok(s) = serde_json::to_string(item) {
                        path.push(Step::Value(s));
                        set.insert(path.clone());
                        path.pop();
                    }
                }
            }
            ListKind::Map(keys) => {
                for item in items {
                    let Some(k) = key_of(item, &keys) else {
                        continue;
                    };
                    path.push(Step::Key(k));
                    set.insert(path.clone());
                    collect(item, node.items(), path, set);
                    path.pop();
                }
            }
        },
        _ => {
            if !path.is_empty() {
                set.insert(path.clone());
            }
        }
    }
}

/// Merges an applied configuration into a live object: the configuration's values win, granular maps
/// and keyed lists merge element by element, atomic values are replaced. Nulls in the configuration
/// remove the field.
pub fn merge(live: Option<&Value>, config: &Value, node: Node<'_>) -> Value {
    match (live, config) {
        (Some(Value::Object(l)), Value::Object(c)) if !is_atomic_object(&node) => {
            let mut out = l.clone();
            for (k, cv) in c {
                if cv.is_null() {
                    out.remove(k);
                    continue;
                }
                let child = node.field_or_free(k);
                let merged = merge(l.get(k), cv, child);
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Some(Value::Array(l)), Value::Array(c)) => match node.list_kind() {
            ListKind::Atomic => config.clone(),
            ListKind::Set => {
                let ids = |items: &[Value]| {
                    items
                        .iter()
                        .map(|i| Some(i.to_string()))
                        .collect::<Vec<_>>()
                };
                Value::Array(merge_ordered(l, &ids(l), c, &ids(c), |live, _| {
                    live.clone()
                }))
            }
            ListKind::Map(keys) => {
                let lkeys: Vec<Option<String>> = l.iter().map(|i| key_of(i, &keys)).collect();
                let ckeys: Vec<Option<String>> = c.iter().map(|i| key_of(i, &keys)).collect();
                let items = node.items();
                Value::Array(merge_ordered(l, &lkeys, c, &ckeys, |live, cfg| {
                    merge(Some(live), cfg, items)
                }))
            }
        },
        _ => strip_nulls(config),
    }
}

/// Merges two keyed lists as server-side apply does since Kubernetes 1.23: elements in both take the
/// order of the configuration (filling the positions the live list gave them), live-only elements stay
/// where they were, and configuration-only elements follow the configuration element before them (or
/// go to the end).
fn merge_ordered(
    live: &[Value],
    lkeys: &[Option<String>],
    config: &[Value],
    ckeys: &[Option<String>],
    both: impl Fn(&Value, &Value) -> Value,
) -> Vec<Value> {
    let in_live = |k: &Option<String>| k.is_some() && lkeys.contains(k);
    let in_config = |k: &Option<String>| k.is_some() && ckeys.contains(k);
    // Configuration elements grouped behind the shared element that precedes them.
    let mut leading: Vec<Value> = Vec::new();
    let mut groups: Vec<(usize, Vec<Value>)> = Vec::new();
    for (i, item) in config.iter().enumerate() {
        if in_live(&ckeys[i]) {
            groups.push((i, Vec::new()));
        } else {
            match groups.last_mut() {
                Some((_, after)) => after.push(strip_nulls(item)),
                None => leading.push(strip_nulls(item)),
            }
        }
    }
    let mut out = Vec::with_capacity(live.len() + config.len());
    let mut next_group = groups.into_iter();
    let mut leading = Some(leading);
    for (j, item) in live.iter().enumerate() {
        if !in_config(&lkeys[j]) {
            out.push(item.clone());
            continue;
        }
        if let Some(l) = leading.take() {
            out.extend(l);
        }
        if let Some((ci, after)) = next_group.next() {
            let li = lkeys.iter().position(|k| *k == ckeys[ci]).unwrap_or(j);
            out.push(both(&live[li], &config[ci]));
            out.extend(after);
        }
    }
    if let Some(l) = leading.take() {
        out.extend(l);
    }
    out
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

fn find_element(items: &[Value], step: &Step) -> Option<usize> {
    match step {
        Step::Key(k) => {
            let want: Map<String, Value> = serde_json::from_str(k).ok()?;
            items
                .iter()
                .position(|item| want.iter().all(|(f, v)| item.get(f) == Some(v)))
        }
        Step::Value(v) => {
            let want: Value = serde_json::from_str(v).ok()?;
            items.iter().position(|item| *item == want)
        }
        Step::Index(i) => (*i < items.len()).then_some(*i),
        Step::Field(_) => None,
    }
}

/// The value at a path, if present.
pub fn get<'v>(obj: &'v Value, path: &[Step]) -> Option<&'v Value> {
    let mut cur = obj;
    for step in path {
        cur = match (step, cur) {
            (Step::Field(f), Value::Object(m)) => m.get(f)?,
            (_, Value::Array(items)) => &items[find_element(items, step)?],
            _ => return None,
        };
    }
    Some(cur)
}

/// Removes the value at a path (a field, or a list element). Returns whether something was removed.
pub fn remove(obj: &mut Value, path: &[Step]) -> bool {
    let Some((last, parent_path)) = path.split_last() else {
        return false;
    };
    let mut cur = obj;
    for step in parent_path {
        cur = match (step, cur) {
            (Step::Field(f), Value::Object(m)) => match m.get_mut(f) {
                Some(v) => v,
                None => return false,
            },
            (_, Value::Array(items)) => match find_element(items, step) {
                Some(i) => &mut items[i],
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, cur) {
        (Step::Field(f), Value::Object(m)) => m.remove(f).is_some(),
        (_, Value::Array(items)) => match find_element(items, last) {
            Some(i) => {
                items.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// The paths an update changed between `old` and `new`: leaves and atomic values whose value differs,
/// fields and elements that appeared (with everything below them) or disappeared.
pub fn changed_paths(old: Option<&Value>, new: Option<&Value>, node: Node<'_>) -> FieldSet {
    let mut set = FieldSet::new();
    diff(old, new, node, &mut Vec::new(), &mut set);
    set
}

fn diff(
    old: Option<&Value>,
    new: Option<&Value>,
    node: Node<'_>,
    path: &mut Path,
    set: &mut FieldSet,
) {
    if old == new {
        return;
    }
    // A null (a `creationTimestamp: null` of a template's metadata) is no value: nobody owns it.
    if old.is_none() && matches!(new, Some(Value::Null)) {
        return;
    }
    match (old, new) {
        (Some(Value::Object(o)), Some(Value::Object(n))) if !is_atomic_object(&node) => {
            for (k, nv) in n {
                path.push(Step::Field(k.clone()));
                diff(o.get(k), Some(nv), node.field_or_free(k), path, set);
                path.pop();
            }
            for (k, ov) in o {
                if !n.contains_key(k) {
                    path.push(Step::Field(k.clone()));
                    set.insert(path.clone());
                    let _ = ov;
                    path.pop();
                }
            }
        }
        (None, Some(Value::Object(m))) if !m.is_empty() && !is_atomic_object(&node) => {
            // `metadata` always exists (it holds the name), so it is never itself "added"; nor is
            // any other struct (only maps and list elements are members in their own right).
            if !path.is_empty()
                && *path != [Step::Field("metadata".into())]
                && !zero_present(path, &node)
            {
                set.insert(path.clone());
            }
            for (k, nv) in m {
                path.push(Step::Field(k.clone()));
                diff(None, Some(nv), node.field_or_free(k), path, set);
                path.pop();
            }
        }
        (o, Some(Value::Array(n))) if !matches!(node.list_kind(), ListKind::Atomic) => {
            let empty = Vec::new();
            let o_items = match o {
                Some(Value::Array(a)) => a,
                _ => &empty,
            };
            if o.is_none() && !path.is_empty() && !zero_present(path, &node) {
                set.insert(path.clone());
            }
            let kind = node.list_kind();
            let step_of = |item: &Value| -> Option<Step> {
                match &kind {
                    ListKind::Map(keys) => key_of(item, keys).map(Step::Key),
                    _ => serde_json::to_string(item).ok().map(Step::Value),
                }
            };
            for item in n {
                let Some(step) = step_of(item) else { continue };
                let before = find_element(o_items, &step).map(|i| &o_items[i]);
                path.push(step);
                if before.is_none() {
                    set.insert(path.clone());
                }
                if matches!(kind, ListKind::Map(_)) {
                    diff(before, Some(item), node.items(), path, set);
                }
                path.pop();
            }
            for item in o_items {
                let Some(step) = step_of(item) else { continue };
                if find_element(n, &step).is_none() {
                    path.push(step);
                    set.insert(path.clone());
                    path.pop();
                }
            }
        }
        _ => {
            if !path.is_empty() {
                set.insert(path.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    fn deploy_node(reg: &Registry) -> crate::registry::ResourceType {
        reg.lookup("apps", "v1", "deployments")
            .expect("deployments")
    }

    #[test]
    fn merges_containers_by_name() {
        let reg = Registry::default();
        let rt = deploy_node(&reg);
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1", "imagePullPolicy": "IfNotPresent"},
            {"name": "b", "image": "b:1"}]}}}});
        let config = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:2"}]}}}});
        let merged = merge(Some(&live), &config, Node::root(&rt));
        let cs = &merged["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            cs[0],
            json!({"name": "a", "image": "a:2", "imagePullPolicy": "IfNotPresent"})
        );
        assert_eq!(cs[1]["name"], "b");
        let set = owned_set(&config, Node::root(&rt));
        assert_eq!(set.len(), 3, "{set:?}");
        let mut removed = merged.clone();
        let elem = vec![
            Step::Field("spec".into()),
            Step::Field("template".into()),
            Step::Field("spec".into()),
            Step::Field("containers".into()),
            Step::Key("{\"name\":\"b\"}".into()),
        ];
        assert!(get(&removed, &elem).is_some());
        assert!(remove(&mut removed, &elem));
        assert_eq!(
            removed["spec"]["template"]["spec"]["containers"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn list_order_follows_the_configuration() {
        let rt = Registry::default()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let wrap = |names: &[&str]| {
            let cs: Vec<serde_json::Value> = names.iter().map(|n| json!({"name": n})).collect();
            json!({"spec": {"template": {"spec": {"containers": cs}}}})
        };
        let order = |v: &serde_json::Value| -> Vec<String> {
            v["spec"]["template"]["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["name"].as_str().map(String::from))
                .collect()
        };
        let node = Node::root(&rt);
        assert_eq!(
            order(&merge(Some(&wrap(&["a", "b"])), &wrap(&["b", "a"]), node)),
            ["b", "a"]
        );
        assert_eq!(
            order(&merge(Some(&wrap(&["nginx"])), &wrap(&["sidecar"]), node)),
            ["nginx", "sidecar"]
        );
        assert_eq!(
            order(&merge(
                Some(&wrap(&["a", "x", "c"])),
                &wrap(&["a", "b", "c"]),
                node
            )),
            ["a", "b", "x", "c"]
        );
        assert_eq!(
            order(&merge(
                Some(&wrap(&["a", "c"])),
                &wrap(&["z", "a", "c"]),
                node
            )),
            ["z", "a", "c"]
        );
    }

    #[test]
    fn reports_changed_leaves_and_new_maps() {
        let reg = Registry::default();
        let rt = reg.lookup("", "v1", "configmaps").expect("configmaps");
        let old = json!({"data": {"a": "1", "b": "2"}});
        let new = json!({"data": {"a": "1", "b": "3"}, "metadata": {"labels": {"x": "y"}}});
        let set = changed_paths(Some(&old), Some(&new), Node::root(&rt));
        let shown: Vec<String> = set.iter().map(super::super::path::display).collect();
        assert_eq!(
            shown,
            vec![".data.b", ".metadata.labels", ".metadata.labels.x"]
        );
    }

    #[test]
    fn defaults_protocol_in_port_keys() {
        let reg = Registry::default();
        let rt = reg.lookup("", "v1", "services").expect("services");
        let mut cfg = json!({"spec": {"ports": [{"port": 80}]}});
        default_list_keys(&mut cfg, Node::root(&rt));
        assert_eq!(cfg["spec"]["ports"][0]["protocol"], "TCP");
    }
}
