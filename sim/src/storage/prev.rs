//! The previous state of each changed object in a stretch of stored change events, as
//! kube-apiserver's watch cache keeps `prevObject` with every event: a watch with a label or field
//! selector resumed from a resourceVersion must see an object relabelled out of its view as DELETED
//! (and one relabelled into it as ADDED), which it can tell only from the state before the change.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, params};
use serde_json::Value;

use super::{Event, EventType, StoreError};

type Key = (String, String, String);

fn key_of(e: &Event) -> Key {
    (e.rk.clone(), e.ns.clone(), e.name.clone())
}

/// Sets `prev` on every MODIFIED event of `events` (the events after `rv`, oldest first): the
/// object of the same object's event before it — earlier in `events`, else found in one backward
/// scan of the history up to `rv` that stops once every such object is found. Left `None` only
/// where that history was compacted away.
pub fn attach(conn: &Connection, rv: u64, events: &mut [Event]) -> Result<(), StoreError> {
    let mut last: HashMap<Key, Arc<Value>> = HashMap::new();
    let mut wanted: HashMap<Key, usize> = HashMap::new();
    for (i, e) in events.iter_mut().enumerate() {
        let key = key_of(e);
        if e.kind == EventType::Modified && e.prev.is_none() {
            match last.get(&key) {
                Some(p) => e.prev = Some(p.clone()),
                None => {
                    wanted.entry(key.clone()).or_insert(i);
                }
            }
        }
        last.insert(key, e.object.clone());
    }
    if wanted.is_empty() {
        return Ok(());
    }
    let db = StoreError::Db;
    // Names first, the object only of the rows wanted: most rows of the history are skipped.
    let mut scan = conn
        .prepare_cached("SELECT rv, rk, ns, name FROM events WHERE rv <= ?1 ORDER BY rv DESC")
        .map_err(db)?;
    let mut rows = scan.query(params![rv as i64]).map_err(db)?;
    let mut found = Vec::new();
    while let Some(row) = rows.next().map_err(db)? {
        let key: Key = (
            row.get(1).map_err(db)?,
            row.get(2).map_err(db)?,
            row.get(3).map_err(db)?,
        );
        if let Some(i) = wanted.remove(&key) {
            found.push((i, row.get::<_, i64>(0).map_err(db)?));
            if wanted.is_empty() {
                break;
            }
        }
    }
    drop(rows);
    let mut data = conn
        .prepare_cached("SELECT data FROM events WHERE rv = ?1")
        .map_err(db)?;
    for (i, at) in found {
        let text: String = data.query_row(params![at], |r| r.get(0)).map_err(db)?;
        let prev = serde_json::from_str(&text).map_err(StoreError::Corrupt)?;
        events[i].prev = Some(Arc::new(prev));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ApiError;
    use crate::storage::Store;
    use serde_json::json;

    fn put(store: &Store, name: &str, tier: &str, kind: EventType) -> u64 {
        store
            .write(|w| {
                let rv = w.next_rv()?;
                let obj = json!({"metadata": {"name": name, "labels": {"tier": tier}}});
                w.put("/configmaps", "default", name, rv, obj, kind)?;
                Ok::<_, ApiError>(rv)
            })
            .expect("write")
    }

    fn tier(v: &Option<Arc<Value>>) -> Option<&str> {
        v.as_ref()?.pointer("/metadata/labels/tier")?.as_str()
    }

    #[test]
    fn a_resumed_history_knows_each_objects_state_before_its_change() {
        let store = Store::open(None).expect("store");
        put(&store, "a", "x", EventType::Added);
        put(&store, "b", "x", EventType::Added);
        let from = put(&store, "untouched", "x", EventType::Added);
        put(&store, "a", "y", EventType::Modified);
        put(&store, "a", "z", EventType::Modified);
        put(&store, "b", "y", EventType::Modified);
        let events = store.events_after_with_prev(from).expect("history");
        let prevs: Vec<_> = events
            .iter()
            .map(|e| (e.name.as_str(), tier(&e.prev)))
            .collect();
        // a's first change: its state before `from` (found in the history); its second: the first.
        assert_eq!(
            prevs,
            [("a", Some("x")), ("a", Some("y")), ("b", Some("x"))]
        );
        // Without: none (what a resumed watch with selectors saw before).
        let plain = store.events_after(from).expect("history");
        assert!(plain.iter().all(|e| e.prev.is_none()));
    }
}
