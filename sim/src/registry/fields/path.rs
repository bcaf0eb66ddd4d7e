//! Field paths and field sets as server-side apply uses them, and their FieldsV1 JSON form.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A struct field or map key: `f:name`.
    Field(String),
    /// A list element identified by its keys, as canonical JSON: `k:{"name":"web"}`.
    Key(String),
    /// A set element identified by its value, as JSON: `v:"finalizer"`.
    Value(String),
    /// A list element by position (only for lists without keys): `i:0`.
    Index(usize),
}

/// A path from the object root.
pub type Path = Vec<Step>;

/// A set of owned paths. A path names a leaf, or a list element (the element itself) when it ends
/// in a key or value step; `Member` paths are written as `.` inside their parent in FieldsV1.
pub type FieldSet = BTreeSet<Path>;

/// `k:{...}` canonical key JSON for the given key fields of `element` (keys sorted).
pub fn key_of(element: &Value, keys: &[String]) -> Option<String> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    let mut m = Map::new();
    for k in sorted {
        if let Some(v) = element.get(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    if m.is_empty() {
        return None;
    }
    serde_json::to_string(&Value::Object(m)).ok()
}

/// The FieldsV1 JSON object of a set.
pub fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut cur = &mut root;
        for step in path.iter() {
            let key = match step {
                Step::Field(f) => format!("f:{f}"),
                Step::Key(k) => format!("k:{k}"),
                Step::Value(v) => format!("v:{v}"),
                Step::Index(i) => format!("i:{i}"),
            };
            let entry = cur.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(next) = entry else { break };
            cur = next;
        }
    }
    // A node that is itself a member and also has children carries ".": fix up the ones that were
    // inserted before their children.
    mark_members(&mut root, set, &mut Vec::new());
    Value::Object(root)
}

fn mark_members(node: &mut Map<String, Value>, set: &FieldSet, prefix: &mut Path) {
    let keys: Vec<String> = node.keys().filter(|k| k.as_str() != ".").cloned().collect();
    for key in keys {
        let Some(step) = parse_step(&key) else {
            continue;
        };
        prefix.push(step);
        if let Some(Value::Object(child)) = node.get_mut(&key) {
            if !child.is_empty() && set.contains(prefix) && !child.contains_key(".") {
                child.insert(".".into(), Value::Object(Map::new()));
            }
            mark_members(child, set, prefix);
        }
        prefix.pop();
    }
}

fn parse_step(key: &str) -> Option<Step> {
    let (kind, rest) = key.split_at_checked(2)?;
    match kind {
        "f:" => Some(Step::Field(rest.to_string())),
        "k:" => {
            // Re-serialise so the key is canonical however the client spelled it.
            let v: Value = serde_json::from_str(rest).ok()?;
            let obj = v.as_object()?;
            let keys: Vec<String> = obj.keys().cloned().collect();
            key_of(&v, &keys).map(Step::Key)
        }
        "v:" => {
            let v: Value = serde_json::from_str(rest).ok()?;
            serde_json::to_string(&v).ok().map(Step::Value)
        }
        "i:" => rest.parse().ok().map(Step::Index),
        _ => None,
    }
}

/// Parses a FieldsV1 object into a set (unknown entries are ignored).
pub fn from_fields_v1(v: &Value) -> FieldSet {
    let mut set = FieldSet::new();
    if let Value::Object(m) = v {
        walk(m, &mut Vec::new(), &mut set);
    }
    set
}

fn walk(m: &Map<String, Value>, prefix: &mut Path, set: &mut FieldSet) {
    for (key, child) in m {
        if key == "." {
            if !prefix.is_empty() {
                set.insert(prefix.clone());
            }
            continue;
        }
        let Some(step) = parse_step(key) else {
            continue;
        };
        prefix.push(step);
        match child {
            Value::Object(c) if !c.is_empty() => walk(c, prefix, set),
            _ => {
                set.insert(prefix.clone());
            }
        }
        prefix.pop();
    }
}

/// `.spec.template.spec.containers[name="web"].image` — how conflicts name a path.
pub fn display(path: &Path) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Field(f) => {
                s.push('.');
                s.push_str(f);
            }
            Step::Key(k) => {
                let parts: Vec<String> = match serde_json::from_str::<Value>(k) {
                    Ok(Value::Object(m)) => m.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    _ => vec![k.clone()],
                };
                s.push_str(&format!("[{}]", parts.join(",")));
            }
            Step::Value(v) => s.push_str(&format!("[={v}]")),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Whether `path` equals `prefix` or lies below it.
pub fn starts_with(path: &Path, prefix: &Path) -> bool {
    path.len() >= prefix.len() && path[..prefix.len()] == prefix[..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_v1_round_trips() {
        let v = json!({
            "f:data": {"f:a": {}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}
        });
        let set = from_fields_v1(&v);
        assert_eq!(set.len(), 4);
        assert!(set.contains(&vec![
            Step::Field("spec".into()),
            Step::Field("containers".into()),
            Step::Key("{\"name\":\"web\"}".into())
        ]));
        assert_eq!(to_fields_v1(&set), v);
    }

    #[test]
    fn keys_are_canonical() {
        let el = json!({"protocol": "TCP", "containerPort": 80, "name": "http"});
        assert_eq!(
            key_of(&el, &["protocol".into(), "containerPort".into()]).as_deref(),
            Some("{\"containerPort\":80,\"protocol\":\"TCP\"}")
        );
        let path = vec![
            Step::Field("ports".into()),
            Step::Key("{\"containerPort\":80,\"protocol\":\"TCP\"}".into()),
        ];
        assert_eq!(display(&path), ".ports[containerPort=80,protocol=\"TCP\"]");
    }
}
