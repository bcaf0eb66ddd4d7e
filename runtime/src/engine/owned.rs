//! What this app last applied to a live object, read back from its managedFields: when the desired
//! object equals it, a server-side apply would change nothing, and the plan needs no dry run.
//!
//! The argument: an apply by manager M of configuration C changes the object only where a value in C
//! differs from the live one, or where a field M alone owned is missing from C (it is removed). The
//! projection of the live object onto M's owned fields has exactly M's fields with their live values;
//! if it equals C, neither can happen. Anything this module cannot read with certainty (another
//! layout, a missing field, a null) answers "not known to be the same", and the plan dry-runs as before.

use serde_json::{Map, Value};

/// Whether applying `desired` as `manager` would leave `live` as it is (see the module's argument).
pub fn same_as_applied(desired: &Value, live: &Value, manager: &str) -> bool {
    let Some(fields) = applied_fields(live, manager) else {
        return false;
    };
    if has_null(desired) {
        return false;
    }
    let Some(projection) = project(live, fields) else {
        return false;
    };
    same_without_identity(desired, &projection)
}

/// What `manager` last applied to `live`, read back: its owned fields with their live values (the
/// projection [`same_as_applied`] compares). `None` when it cannot be read with certainty.
pub fn applied(live: &Value, manager: &str) -> Option<Value> {
    project(live, applied_fields(live, manager)?)
}

/// [`applied`] under the JSON pointers `paths` only (`/spec/selector`, …): the same values there, without
/// projecting the rest of the object (what planning's immutable-field check reads, for every changed
/// object). A path the app does not set is left out; `None` when the managed fields cannot be read, or an
/// owned field under a path is missing.
pub fn applied_under(live: &Value, manager: &str, paths: &[&str]) -> Option<Value> {
    let fields = applied_fields(live, manager)?;
    let mut out = Value::Object(Map::new());
    'paths: for path in paths {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (mut node, mut value) = (fields, live);
        for (i, segment) in segments.iter().enumerate() {
            if node.keys().all(|k| k == ".") && i > 0 {
                // An atomic value owned whole above the path: the value at the path is the app's.
                let rest = format!("/{}", segments[i..].join("/"));
                if let Some(v) = value.pointer(&rest) {
                    insert_at(&mut out, &segments, v.clone());
                }
                continue 'paths;
            }
            let Some(next) = node.get(&format!("f:{segment}")).and_then(Value::as_object) else {
                continue 'paths;
            };
            node = next;
            value = value.get(*segment)?;
        }
        insert_at(&mut out, &segments, project(value, node)?);
    }
    Some(out)
}

/// Sets `value` at `segments` in `out`, making the objects on the way.
fn insert_at(out: &mut Value, segments: &[&str], value: Value) {
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut at = out;
    for segment in parents {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        at = map
            .entry(segment.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(map) = at.as_object_mut() {
        map.insert(last.to_string(), value);
    }
}

/// The fields under `paths` (JSON pointers, e.g. `/spec/template`) where `desired` differs from what was
/// applied (see [`applied`]): a value set, changed or no longer set. Only the fields the app sets count,
/// so what the server defaulted or another manager added is never a difference.
pub fn changed_under<'p>(desired: &Value, applied: &Value, paths: &[&'p str]) -> Vec<&'p str> {
    paths
        .iter()
        .copied()
        .filter(|path| {
            let ports = path.ends_with("/ports");
            match (desired.pointer(path), applied.pointer(path)) {
                (None, None) => false,
                (Some(d), Some(p)) => !same(d, p, ports),
                _ => true,
            }
        })
        .collect()
}

/// `same(identity_free(desired), projection)` without copying `desired` (only its metadata is copied,
/// to leave out the name and namespace).
fn same_without_identity(desired: &Value, projection: &Value) -> bool {
    let (Value::Object(d), Value::Object(p)) = (desired, projection) else {
        return same(&identity_free(desired), projection, false);
    };
    let metadata = d
        .get("metadata")
        .and_then(Value::as_object)
        .map(|meta| {
            let mut meta = meta.clone();
            meta.remove("name");
            meta.remove("namespace");
            meta
        })
        .filter(|meta| !meta.is_empty())
        .map(Value::Object);
    let fields = || {
        d.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "status" | "metadata"))
            .map(|(k, v)| (k.as_str(), v))
            .chain(metadata.as_ref().map(|m| ("metadata", m)))
    };
    p.keys().all(|k| fields().any(|(dk, _)| dk == k))
        && fields().all(|(k, dv)| p.get(k).is_some_and(|pv| same(dv, pv, k == "ports")))
}

/// Equal, but for one default the server writes into the key of a list element it owns for us: a port's
/// `protocol: TCP` (the default of every port list in the API) that the desired port leaves out.
fn same(desired: &Value, projection: &Value, in_ports: bool) -> bool {
    match (desired, projection) {
        (Value::Object(d), Value::Object(p)) => {
            let defaulted =
                |k: &String| in_ports && k == "protocol" && p.get(k) == Some(&Value::from("TCP"));
            p.keys().all(|k| d.contains_key(k) || defaulted(k))
                && d.iter()
                    .all(|(k, dv)| p.get(k).is_some_and(|pv| same(dv, pv, k == "ports")))
        }
        (Value::Array(d), Value::Array(p)) => {
            d.len() == p.len() && d.iter().zip(p).all(|(dv, pv)| same(dv, pv, in_ports))
        }
        _ => desired == projection,
    }
}

/// The fieldsV1 of `manager`'s apply entry (not of a subresource).
fn applied_fields<'a>(live: &'a Value, manager: &str) -> Option<&'a Map<String, Value>> {
    let mut entries = live["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .filter(|e| {
            e["manager"] == manager
                && e["operation"] == "Apply"
                && e["subresource"].as_str().unwrap_or("").is_empty()
        });
    let entry = entries.next()?;
    if entries.next().is_some() {
        return None;
    }
    if entry["fieldsType"] != "FieldsV1" {
        return None;
    }
    entry["fieldsV1"].as_object()
}

/// The desired object without what identifies it (fieldsV1 never lists apiVersion, kind, name or
/// namespace).
fn identity_free(desired: &Value) -> Value {
    let mut out = desired.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
        map.remove("status");
        let empty = match map.get_mut("metadata").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.remove("name");
                meta.remove("namespace");
                meta.is_empty()
            }
            None => false,
        };
        if empty {
            map.remove("metadata");
        }
    }
    out
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.values().any(has_null),
        Value::Array(a) => a.iter().any(has_null),
        _ => false,
    }
}

/// `live` reduced to the fields of one fieldsV1 node; `None` when an owned field is not there.
fn project(live: &Value, fields: &Map<String, Value>) -> Option<Value> {
    let children: Vec<(&String, &Value)> = fields.iter().filter(|(k, _)| *k != ".").collect();
    if children.is_empty() {
        // A leaf (or an atomic value): the whole value is owned.
        return Some(live.clone());
    }
    match live {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, sub) in children {
                let name = key.strip_prefix("f:")?;
                let value = object.get(name)?;
                out.insert(name.to_string(), project(value, sub.as_object()?)?);
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => {
            // Keyed (`k:`) and set (`v:`) elements, in the live list's order.
            let mut picked: Vec<Option<Value>> = vec![None; items.len()];
            for (key, sub) in children {
                let sub = sub.as_object()?;
                let index = if let Some(keys) = key.strip_prefix("k:") {
                    let keys: Map<String, Value> = serde_json::from_str(keys).ok()?;
                    unique(items, |item| {
                        keys.iter().all(|(k, v)| item.get(k) == Some(v))
                    })?
                } else if let Some(value) = key.strip_prefix("v:") {
                    let value: Value = serde_json::from_str(value).ok()?;
                    unique(items, |item| *item == value)?
                } else {
                    return None;
                };
                if picked[index].is_some() {
                    return None;
                }
                picked[index] = Some(project(&items[index], sub)?);
            }
            Some(Value::Array(picked.into_iter().flatten().collect()))
        }
        _ => None,
    }
}

/// The index of the one item that matches.
fn unique(items: &[Value], matches: impl Fn(&Value) -> bool) -> Option<usize> {
    let mut found = items.iter().enumerate().filter(|(_, item)| matches(item));
    let (index, _) = found.next()?;
    found.next().is_none().then_some(index)
}

#[cfg(test)]
mod tests {
    use super::{identity_free, same, same_as_applied, same_without_identity};
    use serde_json::{Value, json};

    fn live(spec: Value, fields: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "web", "namespace": "n", "uid": "u", "resourceVersion": "7",
                "labels": {"app": "web"},
                "annotations": {"deployment.kubernetes.io/revision": "1"},
                "managedFields": [
                    {"manager": "piceli", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": fields},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:replicas": {}}}}
                ]
            },
            "spec": spec,
            "status": {"replicas": 2}
        })
    }

    fn fields() -> Value {
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:image": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}
                }}}
            }
        })
    }

    fn live_spec() -> Value {
        json!({
            "replicas": 2,
            "revisionHistoryLimit": 10,
            "template": {"spec": {"containers": [
                {"name": "sidecar", "image": "s:1"},
                {"name": "app", "image": "a:1", "imagePullPolicy": "IfNotPresent",
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]}
            ]}}
        })
    }

    fn desired(image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "n", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "app", "image": image, "ports": [{"containerPort": 80}]}
            ]}}}
        })
    }

    #[test]
    fn leaving_out_the_identity_in_place_agrees_with_the_copy() {
        let d = desired("a:1");
        let cases = [
            json!({"metadata": {"labels": {"app": "web"}}, "spec": d["spec"].clone()}),
            json!({"spec": d["spec"].clone()}),
            json!({"metadata": {"labels": {"app": "other"}}, "spec": d["spec"].clone()}),
            json!({"metadata": {"labels": {"app": "web"}}, "spec": d["spec"].clone(), "extra": 1}),
            json!({"metadata": {}, "spec": d["spec"].clone()}),
            json!({"kind": "Deployment", "metadata": {"labels": {"app": "web"}}, "spec": d["spec"].clone()}),
        ];
        let bare = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        for desired in [d.clone(), bare] {
            for projection in &cases {
                assert_eq!(
                    same_without_identity(&desired, projection),
                    same(&identity_free(&desired), projection, false),
                    "{desired} vs {projection}"
                );
            }
        }
        assert!(same_without_identity(&d, &cases[0]));
    }

    #[test]
    fn what_was_applied_under_some_paths_is_the_projection_there() {
        let l = live(live_spec(), fields());
        let whole = super::applied(&l, "piceli").expect("applied");
        let paths = [
            "/spec/replicas",
            "/spec/template/spec",
            "/spec/selector",
            "/metadata",
        ];
        let under = super::applied_under(&l, "piceli", &paths).expect("under");
        for path in paths {
            assert_eq!(under.pointer(path), whole.pointer(path), "{path}");
        }
        assert_eq!(
            under["spec"].as_object().map(|m| m.len()),
            Some(2),
            "{under}"
        );
        assert!(super::applied_under(&l, "someone-else", &paths).is_none());
    }

    #[test]
    fn what_was_applied_and_is_still_there_is_the_same() {
        assert!(same_as_applied(
            &desired("a:1"),
            &live(live_spec(), fields()),
            "piceli"
        ));
    }

    #[test]
    fn a_changed_value_a_dropped_field_or_another_layout_is_not() {
        let l = live(live_spec(), fields());
        assert!(!same_as_applied(&desired("a:2"), &l, "piceli"));
        let mut fewer = desired("a:1");
        fewer["spec"]
            .as_object_mut()
            .expect("spec")
            .remove("replicas");
        assert!(
            !same_as_applied(&fewer, &l, "piceli"),
            "replicas would be removed"
        );
        let mut more = desired("a:1");
        more["spec"]["paused"] = json!(false);
        assert!(!same_as_applied(&more, &l, "piceli"), "a new field");
        assert!(!same_as_applied(&desired("a:1"), &l, "someone-else"));
        let mut edited = live_spec();
        edited["template"]["spec"]["containers"][1]["image"] = json!("b:1");
        assert!(!same_as_applied(
            &desired("a:1"),
            &live(edited, fields()),
            "piceli"
        ));
        let mut gone = live_spec();
        gone.as_object_mut().expect("spec").remove("replicas");
        assert!(!same_as_applied(
            &desired("a:1"),
            &live(gone, fields()),
            "piceli"
        ));
        let mut null = desired("a:1");
        null["spec"]["paused"] = Value::Null;
        assert!(!same_as_applied(&null, &l, "piceli"));
    }

    #[test]
    fn a_port_protocol_the_server_defaulted_into_the_key_is_the_default_only() {
        let mut f = fields();
        let ports = "k:{\"containerPort\":80,\"protocol\":\"TCP\"}";
        f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:ports"]
            [ports]["f:protocol"] = json!({});
        assert!(same_as_applied(
            &desired("a:1"),
            &live(live_spec(), f.clone()),
            "piceli"
        ));
        let mut udp = live_spec();
        udp["template"]["spec"]["containers"][1]["ports"][0]["protocol"] = json!("UDP");
        let key =
            f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:ports"]
                .as_object_mut()
                .expect("ports")
                .remove(ports)
                .expect("key");
        f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:ports"]["k:{\"containerPort\":80,\"protocol\":\"UDP\"}"] =
            key;
        assert!(!same_as_applied(&desired("a:1"), &live(udp, f), "piceli"));
    }
}
