//! What Go's `omitempty` does to a built-in object on its way through kube-apiserver: an empty map or
//! list in an optional field is not there when the object is written back.

use serde_json::Value;

use crate::registry::schema::Node;

/// Lists that are not `omitempty` (an empty one is kept as `[]`).
const KEPT_EMPTY: &[&str] = &["containers", "rules"];

/// Drops the empty maps (`additionalProperties`) and lists under `node` that Go would omit.
pub fn drop_empty(value: &mut Value, node: Node<'_>) {
    let Value::Object(m) = value else {
        return;
    };
    let keys: Vec<String> = m.keys().cloned().collect();
    for k in keys {
        let child = node.field_or_free(&k);
        let Some(v) = m.get_mut(&k) else { continue };
        let empty = match v {
            Value::Object(o) => o.is_empty() && !child.is_struct() && !child.is_free(),
            Value::Array(a) => a.is_empty() && !KEPT_EMPTY.contains(&k.as_str()),
            _ => false,
        };
        if empty {
            m.remove(&k);
            continue;
        }
        match v {
            Value::Object(_) if child.is_struct() => drop_empty(v, child),
            Value::Array(items) => {
                let item = child.items();
                if item.is_struct() {
                    for i in items.iter_mut() {
                        drop_empty(i, item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::registry::Registry;
    use crate::registry::schema::Node;

    #[test]
    fn empty_optional_maps_and_lists_go_structs_stay() {
        let rt = Registry::default()
            .lookup("", "v1", "configmaps")
            .expect("configmaps");
        let mut cm = json!({"metadata": {"name": "a", "labels": {}}, "data": {}, "binaryData": {"b": "AA=="}});
        super::drop_empty(&mut cm, Node::root(&rt));
        assert_eq!(
            cm,
            json!({"metadata": {"name": "a"}, "binaryData": {"b": "AA=="}})
        );
        let pods = Registry::default().lookup("", "v1", "pods").expect("pods");
        let mut pod = json!({"spec": {"securityContext": {}, "volumes": [], "containers": []}});
        super::drop_empty(&mut pod, Node::root(&pods));
        assert_eq!(
            pod,
            json!({"spec": {"securityContext": {}, "containers": []}})
        );
    }
}
