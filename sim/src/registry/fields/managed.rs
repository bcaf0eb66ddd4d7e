//! managedFields: reading and writing the entries, and the two ways ownership changes — an apply
//! (merge, prune, conflicts, force) and an update (whoever changes a field takes it over).

use serde_json::{Map, Value, json};

use super::path::{FieldSet, Path, Step, display, from_fields_v1, starts_with, to_fields_v1};
use super::walk::{changed_paths, default_list_keys, get, merge, owned_set, remove};
use crate::registry::schema::Node;
use crate::status::Cause;

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The field manager's name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// The apiVersion the fields were written with.
    pub api_version: String,
    /// When the entry last changed (RFC 3339, seconds).
    pub time: String,
    /// `""` for the main resource, or the subresource written (`status`, `scale`).
    pub subresource: String,
    /// The owned fields (`fieldsV1`).
    pub set: FieldSet,
}

impl Entry {
    fn same_owner(&self, manager: &str, operation: &str, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }
}

/// The managedFields entries of an object.
pub fn read_entries(obj: Option<&Value>) -> Vec<Entry> {
    let Some(Value::Array(items)) = obj.and_then(|o| o.pointer("/metadata/managedFields")) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            Entry {
                manager: s("manager"),
                operation: s("operation"),
                api_version: s("apiVersion"),
                time: s("time"),
                subresource: s("subresource"),
                set: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
            }
        })
        .collect()
}

/// Writes the entries into `metadata.managedFields` (removing the field when there are none).
pub fn write_entries(obj: &mut Value, entries: &[Entry]) {
    let Value::Object(root) = obj else { return };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else { return };
    if entries.is_empty() {
        meta.remove("managedFields");
        return;
    }
    // `sortEncodedManagedFields`: appliers before updaters, then by time (to the second), manager,
    // apiVersion and subresource.
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|p, q| {
        let seconds = |e: &Entry| crate::time::parse_rfc3339(&e.time).unwrap_or(0);
        (p.operation.as_str(), seconds(p), p.manager.as_str())
            .cmp(&(q.operation.as_str(), seconds(q), q.manager.as_str()))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    let list: Vec<Value> = sorted
        .into_iter()
        .map(|e| {
            let mut m = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&e.set),
            });
            if !e.subresource.is_empty() {
                m["subresource"] = json!(e.subresource);
            }
            m
        })
        .collect();
    meta.insert("managedFields".into(), Value::Array(list));
}

const IGNORED_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The part of an object field ownership covers: no apiVersion/kind/system metadata; for the main
/// resource of a type with a status subresource no status, and for the status subresource only status.
pub fn owned_part(obj: &Value, subresource: &str, status_separate: bool) -> Value {
    let Value::Object(m) = obj else {
        return Value::Object(Map::new());
    };
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "apiVersion" | "kind" => {}
            "status" if status_separate && subresource != "status" => {}
            _ if subresource == "status" && k != "status" => {}
            "metadata" => {
                if let Value::Object(meta) = v {
                    let kept: Map<String, Value> = meta
                        .iter()
                        .filter(|(k, _)| !IGNORED_META.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !kept.is_empty() {
                        out.insert(k.clone(), Value::Object(kept));
                    }
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// A server-side apply conflict: who owns which path.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The manager that owns the conflicting field.
    pub manager: String,
    /// The apiVersion that manager wrote with.
    pub api_version: String,
    /// The manager's operation (`Apply` or `Update`).
    pub operation: String,
    /// The subresource the manager wrote (`""` for the main resource).
    pub subresource: String,
    /// The conflicting field's path.
    pub path: Path,
}

impl Conflict {
    /// The manager as kube-apiserver's conflict messages name it (`printManager`): an applier by its
    /// name; an updater with the apiVersion it used and when.
    fn who(&self) -> String {
        let mut who = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            who = format!("{who} with subresource {:?}", self.subresource);
        }
        // (The manager identifier the message is printed from carries no time.)
        if self.operation == "Update" {
            who = format!("{who} using {}", self.api_version);
        }
        who
    }
}

/// The message and causes of a 409 for these conflicts, worded like the real API server.
pub fn conflict_message(conflicts: &[Conflict]) -> (String, Vec<Cause>) {
    let who = Conflict::who;
    let causes = conflicts
        .iter()
        .map(|c| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", who(c)),
            field: display(&c.path),
        })
        .collect();
    let n = conflicts.len();
    let body = if n == 1 {
        format!(
            "conflict with {}: {}",
            who(&conflicts[0]),
            display(&conflicts[0].path)
        )
    } else {
        let mut managers: Vec<String> = conflicts.iter().map(who).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for m in managers {
            lines.push(format!("conflicts with {m}:"));
            for c in conflicts.iter().filter(|c| who(c) == m) {
                lines.push(format!("- {}", display(&c.path)));
            }
        }
        lines.join("\n")
    };
    let plural = if n == 1 { "" } else { "s" };
    (
        format!("Apply failed with {n} conflict{plural}: {body}"),
        causes,
    )
}

/// Who writes and how (`force` only matters to apply; updates always take over what they change).
pub struct ApplyRequest<'a> {
    /// The field manager of the request.
    pub manager: &'a str,
    /// The apiVersion of the request.
    pub api_version: &'a str,
    /// `""`, `status` or `scale`.
    pub subresource: &'a str,
    /// Whether the type has a status subresource (status ownership is then kept apart).
    pub status_separate: bool,
    /// Apply only: take over conflicting fields instead of failing.
    pub force: bool,
    /// The time recorded on changed entries (RFC 3339).
    pub now: &'a str,
}

/// Applies `config` to `live` (None when creating): returns the merged object (not yet defaulted)
/// with its new managedFields, or the conflicts.
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    node: Node<'_>,
    req: &ApplyRequest<'_>,
) -> Result<Value, Vec<Conflict>> {
    let mut cfg = owned_part(config, req.subresource, req.status_separate);
    default_list_keys(&mut cfg, node);
    let applied = owned_set(&cfg, node);
    let mut entries = read_entries(live);
    let base = live.cloned().unwrap_or_else(|| json!({}));
    let mut merged = merge(Some(&base), &cfg, node);

    let mine = entries
        .iter()
        .position(|e| e.same_owner(req.manager, "Apply", req.subresource));
    let previous = mine.map(|i| entries[i].set.clone()).unwrap_or_default();
    let owned_by_others = |p: &Path, entries: &[Entry]| {
        entries
            .iter()
            .enumerate()
            .any(|(i, e)| Some(i) != mine && e.set.iter().any(|q| starts_with(q, p)))
    };
    for p in previous.difference(&applied) {
        if !owned_by_others(p, &entries) && !applied.iter().any(|q| starts_with(q, p)) {
            remove(&mut merged, p);
        }
    }

    let live_part = owned_part(&base, req.subresource, req.status_separate);
    let changed: Vec<&Path> = applied
        .iter()
        .filter(|p| match p.last() {
            Some(Step::Key(_)) | Some(Step::Value(_)) => get(&live_part, p).is_none(),
            _ => get(&live_part, p) != get(&merged, p),
        })
        .collect();
    let mut conflicts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if Some(i) == mine {
            continue;
        }
        for p in &changed {
            if e.set.contains(*p) {
                conflicts.push(Conflict {
                    manager: e.manager.clone(),
                    api_version: e.api_version.clone(),
                    operation: e.operation.clone(),
                    subresource: e.subresource.clone(),
                    path: (*p).clone(),
                });
            }
        }
    }
    if !conflicts.is_empty() && !req.force {
        return Err(conflicts);
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) != mine {
            for p in &changed {
                e.set.remove(*p);
            }
        }
    }
    let entry = Entry {
        manager: req.manager.to_string(),
        operation: "Apply".into(),
        api_version: req.api_version.to_string(),
        time: req.now.to_string(),
        subresource: req.subresource.to_string(),
        set: applied,
    };
    match mine {
        Some(i) => {
            if entries[i].set == entry.set && entries[i].api_version == entry.api_version {
                // Keep the old time: the caller decides whether anything changed at all.
                let time = entries[i].time.clone();
                entries[i] = Entry { time, ..entry };
            } else {
                entries[i] = entry;
            }
        }
        None => entries.push(entry),
    }
    entries.retain(|e| !e.set.is_empty());
    write_entries(&mut merged, &entries);
    Ok(merged)
}

/// Records an update (create, PUT, non-apply patch) by `manager`: it takes over every field it
/// changed; others lose those fields. Writes the new entries into `new`.
pub fn update(old: Option<&Value>, new: &mut Value, node: Node<'_>, req: &ApplyRequest<'_>) {
    let (manager, api_version, subresource, status_separate, now) = (
        req.manager,
        req.api_version,
        req.subresource,
        req.status_separate,
        req.now,
    );
    // A client may rewrite managedFields (kubectl does, to migrate client-side apply ownership to
    // server-side apply); a non-empty list that differs from the stored one replaces it, and `[{}]`
    // clears it. An absent or empty list keeps the stored entries.
    let sent = new
        .pointer("/metadata/managedFields")
        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()));
    let mut entries = match sent {
        Some(list) if Some(list) != old.and_then(|o| o.pointer("/metadata/managedFields")) => {
            read_entries(Some(new))
                .into_iter()
                .filter(|e| !e.manager.is_empty())
                .collect()
        }
        _ => read_entries(old),
    };
    let old_part = old.map(|o| owned_part(o, subresource, status_separate));
    let new_part = owned_part(new, subresource, status_separate);
    let changed = changed_paths(old_part.as_ref(), Some(&new_part), node);
    if !changed.is_empty() {
        let (present, gone): (Vec<&Path>, Vec<&Path>) =
            changed.iter().partition(|p| get(&new_part, p).is_some());
        let lost = |p: &Path| changed.contains(p) || gone.iter().any(|g| starts_with(p, g));
        let pos = entries
            .iter()
            .position(|e| e.same_owner(manager, "Update", subresource));
        for (i, e) in entries.iter_mut().enumerate() {
            if Some(i) != pos {
                e.set.retain(|p| !lost(p));
            }
        }
        let i = match pos {
            Some(i) => i,
            None => {
                entries.push(Entry {
                    manager: manager.to_string(),
                    operation: "Update".into(),
                    api_version: api_version.to_string(),
                    time: now.to_string(),
                    subresource: subresource.to_string(),
                    set: FieldSet::new(),
                });
                entries.len() - 1
            }
        };
        let e = &mut entries[i];
        e.set.retain(|p| !gone.iter().any(|g| starts_with(p, g)));
        e.set.extend(present.into_iter().cloned());
        e.time = now.to_string();
        e.api_version = api_version.to_string();
        entries.retain(|e| !e.set.is_empty());
    }
    write_entries(new, &entries);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn req<'a>(manager: &'a str, force: bool) -> ApplyRequest<'a> {
        ApplyRequest {
            manager,
            api_version: "v1",
            subresource: "",
            status_separate: false,
            force,
            now: "2026-01-01T00:00:00Z",
        }
    }

    #[test]
    fn conflicts_sharing_and_force() {
        let reg = Registry::default();
        let rt = reg.lookup("", "v1", "configmaps").expect("configmaps");
        let node = Node::root(&rt);
        let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "1", "only-a": "a"}});
        let live = apply(None, &a, node, &req("a", false)).expect("first apply");
        // Same value: shared ownership, no conflict.
        let b_same = json!({"data": {"k": "1"}});
        let live = apply(Some(&live), &b_same, node, &req("b", false)).expect("shared");
        assert_eq!(read_entries(Some(&live)).len(), 2);
        // Different value: conflict naming the owner.
        let b_diff = json!({"data": {"k": "2"}});
        let err = apply(Some(&live), &b_diff, node, &req("b", false)).expect_err("conflict");
        let (msg, causes) = conflict_message(&err);
        assert_eq!(
            msg,
            "Apply failed with 1 conflict: conflict with \"a\": .data.k"
        );
        assert_eq!(causes[0].field, ".data.k");
        // Forced: b takes the field, a loses it.
        let live = apply(Some(&live), &b_diff, node, &req("b", true)).expect("forced");
        assert_eq!(live["data"]["k"], "2");
        let entries = read_entries(Some(&live));
        let a_set = &entries
            .iter()
            .find(|e| e.manager == "a")
            .expect("a entry")
            .set;
        assert_eq!(a_set.len(), 1);
        // a stops applying only-a: removed because nobody else owns it.
        let a2 = json!({"data": {}});
        let live = apply(Some(&live), &a2, node, &req("a", false)).expect("prune");
        assert!(live["data"].get("only-a").is_none());
        assert_eq!(live["data"]["k"], "2");
    }

    #[test]
    fn updates_take_over_changed_fields() {
        let reg = Registry::default();
        let rt = reg.lookup("", "v1", "configmaps").expect("configmaps");
        let node = Node::root(&rt);
        let live =
            apply(None, &json!({"data": {"k": "1"}}), node, &req("a", false)).expect("apply");
        let mut new = live.clone();
        new["data"]["k"] = json!("9");
        update(Some(&live), &mut new, node, &req("editor", false));
        let entries = read_entries(Some(&new));
        assert_eq!(entries.len(), 1, "a lost its only field: {entries:?}");
        assert_eq!(entries[0].manager, "editor");
        assert_eq!(entries[0].operation, "Update");
    }
}
