//! The controllers' shared informer cache: every kind's objects parsed once, then kept current by the
//! store's change events (as client-go informers keep a parsed copy that watch events refresh), not
//! read and parsed again per change of the kind, nor once per controller per turn. A kind is read from
//! the store when first listed, and again only when events were missed (the hub's buffer overran) or
//! a change is not yet in the events received (a write racing the list: the next use catches up).
//!
//! The cached copies leave out `metadata.managedFields`, as client-go's informers strip them with
//! `TransformStripManagedFields`: no controller reads them from its lists, and parsed they were the
//! larger part of each object held (issue 34). A controller that needs them reads the object itself
//! ([`crate::cluster::Cluster::get`]); an update built from a cached copy carries none, which the write
//! pipeline takes as "keep the stored ones".

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::broadcast::{self, error::TryRecvError};

use crate::storage::{Event, EventType, Store};

/// A kind's objects in the store's order (namespace, name), current as of resourceVersion `at` once
/// its `pending` changes are applied — when the kind is next listed, so a list a controller still
/// holds while it lists other kinds is not copied to apply its own writes.
struct Cached {
    /// The store's resourceVersion when the kind was read: changes up to it are in the list.
    read_at: u64,
    /// The latest change in the list (`read_at`, or the last change applied since).
    at: u64,
    keys: Vec<(String, String)>,
    /// Each object behind its own `Arc`: a change copies the list of pointers (when a controller
    /// still holds the list), not every object in it.
    items: Arc<Vec<Arc<Value>>>,
    pending: Vec<Change>,
}

/// A change received and not yet applied: the object as the cache keeps it (`None`: deleted), so the
/// event itself — the whole object and its previous state — is not held until the kind is listed.
struct Change {
    rv: u64,
    key: (String, String),
    object: Option<Arc<Value>>,
}

impl Change {
    fn of(e: &Event) -> Change {
        Change {
            rv: e.rv,
            key: (e.ns.clone(), e.name.clone()),
            object: (e.kind != EventType::Deleted).then(|| Arc::new(trimmed(&e.object))),
        }
    }
}

/// An object as the cache keeps it: without `metadata.managedFields`.
fn trimmed(object: &Value) -> Value {
    let Some(fields) = object.as_object() else {
        return object.clone();
    };
    fields
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v.as_object()) {
                ("metadata", Some(meta)) => Value::Object(
                    meta.iter()
                        .filter(|(k, _)| *k != "managedFields")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

impl Cached {
    /// Applies the changes received since the kind was last listed.
    fn apply_pending(&mut self) {
        for c in std::mem::take(&mut self.pending) {
            if c.rv > self.read_at {
                self.apply(c);
            }
        }
    }

    /// Applies one change of this kind.
    fn apply(&mut self, c: Change) {
        let found = self.keys.binary_search(&c.key);
        let items = Arc::make_mut(&mut self.items);
        match (c.object, found) {
            (None, Ok(i)) => {
                self.keys.remove(i);
                items.remove(i);
            }
            (None, Err(_)) => {}
            (Some(o), Ok(i)) => items[i] = o,
            (Some(o), Err(i)) => {
                self.keys.insert(i, c.key);
                items.insert(i, o);
            }
        }
        self.at = self.at.max(c.rv);
    }
}

#[derive(Default)]
struct Lists {
    by_key: HashMap<String, Cached>,
    /// The hub's events since the first list (subscribed then).
    events: Option<broadcast::Receiver<Arc<Event>>>,
}

impl Lists {
    /// Queues the events received so far on their cached kinds; forgets every kind when some were
    /// missed, and a kind whose queue outgrew its list (reading it again is then cheaper).
    fn catch_up(&mut self, store: &Store) {
        let events = self.events.get_or_insert_with(|| store.hub().subscribe());
        loop {
            match events.try_recv() {
                Ok(e) => {
                    let Some(c) = self.by_key.get_mut(&e.rk) else {
                        continue;
                    };
                    if c.pending.len() > c.keys.len().max(64) {
                        self.by_key.remove(&e.rk);
                    } else if e.rv > c.read_at {
                        c.pending.push(Change::of(&e));
                    }
                }
                Err(TryRecvError::Lagged(_)) => self.by_key.clear(),
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
    }
}

/// Parsed lists by store key.
#[derive(Default)]
pub struct Informers {
    lists: Mutex<Lists>,
    reads: AtomicU64,
}

impl Informers {
    /// Every object stored under `rk`, in the store's order, from the cache kept current by events.
    pub fn list(&self, store: &Store, rk: &str) -> Arc<Vec<Arc<Value>>> {
        let Ok(mut lists) = self.lists.lock() else {
            return read(store, rk).map(|c| c.items).unwrap_or_default();
        };
        lists.catch_up(store);
        let stamp = store.hub().last_change(rk);
        if let Some(c) = lists.by_key.get_mut(rk) {
            c.apply_pending();
            if c.at >= stamp {
                return c.items.clone();
            }
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        match read(store, rk) {
            Some(c) => {
                let items = c.items.clone();
                lists.by_key.insert(rk.to_string(), c);
                items
            }
            None => {
                lists.by_key.remove(rk);
                Arc::default()
            }
        }
    }

    /// Takes in the events received so far. The cache's receiver is read only here and when a kind is
    /// listed; without this, a stretch of writes no controller lists (ConfigMaps in bulk) would keep
    /// the hub's whole buffer of events — objects and their previous states — alive until the next
    /// list (tokio's broadcast frees an event once every receiver has read it). Skipped while a
    /// controller is listing (which catches up itself): the controllers' loop calls this from an async
    /// task, which must not wait for a list read from the store.
    pub fn catch_up(&self, store: &Store) {
        if let Ok(mut lists) = self.lists.try_lock()
            && lists.events.is_some()
        {
            lists.catch_up(store);
        }
    }

    /// How many lists were read (and parsed) from the store rather than served from the cache.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

/// Reads a kind from the store.
fn read(store: &Store, rk: &str) -> Option<Cached> {
    let (stored, at) = store.list(rk, None, None).ok()?;
    let (keys, items) = stored
        .into_iter()
        .map(|s| {
            let mut object = s.object;
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            ((s.ns, s.name), Arc::new(object))
        })
        .unzip();
    Some(Cached {
        read_at: at,
        at,
        keys,
        items: Arc::new(items),
        pending: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn put(store: &Store, rk: &str, name: &str) {
        store
            .write(|w| {
                let rv = w.next_rv()?;
                let obj = json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string()}});
                w.put(rk, "default", name, rv, obj, EventType::Added)?;
                Ok(())
            })
            .expect("write");
    }

    fn names(items: &[Arc<Value>]) -> Vec<&str> {
        items
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or(""))
            .collect()
    }

    #[test]
    fn a_kind_is_read_once_then_kept_current_by_its_events() {
        let store = Store::open(None).expect("in-memory store");
        let informers = Informers::default();
        put(&store, "/configmaps", "b");
        assert_eq!(names(&informers.list(&store, "/configmaps")), ["b"]);
        assert_eq!(names(&informers.list(&store, "/configmaps")), ["b"]);
        assert!(informers.list(&store, "/secrets").is_empty());
        assert_eq!(informers.reads(), 2, "the second list came from the cache");
        // Changes come from the events, in the store's order; a list handed out stays as it was.
        let held = informers.list(&store, "/configmaps");
        put(&store, "/configmaps", "a");
        put(&store, "/configmaps", "c");
        put(&store, "/configmaps", "b");
        assert_eq!(
            names(&informers.list(&store, "/configmaps")),
            ["a", "b", "c"]
        );
        assert_eq!(names(&held), ["b"]);
        store
            .write(|w| {
                let rv = w.next_rv()?;
                w.delete(
                    "/configmaps",
                    "default",
                    "a",
                    rv,
                    json!({"metadata": {"name": "a"}}),
                )?;
                Ok(())
            })
            .expect("delete");
        let now = informers.list(&store, "/configmaps");
        assert_eq!(names(&now), ["b", "c"]);
        let b = store.get("/configmaps", "default", "b").expect("get");
        assert_eq!(Some(&*now[0]), b.as_ref(), "b as last written");
        assert!(informers.list(&store, "/secrets").is_empty());
        assert_eq!(informers.reads(), 2, "nothing was read again");
        assert_eq!(
            informers.list(&store, "/configmaps").as_ref(),
            &store
                .list("/configmaps", None, None)
                .expect("list")
                .0
                .into_iter()
                .map(|s| Arc::new(s.object))
                .collect::<Vec<_>>(),
            "the cache is what the store holds"
        );
    }

    #[test]
    fn caught_up_events_are_no_longer_held_for_the_cache() {
        let store = Store::open(None).expect("in-memory store");
        let informers = Informers::default();
        // Not subscribed before the first list: catching up holds nothing.
        informers.catch_up(&store);
        assert!(informers.list(&store, "/configmaps").is_empty());
        let mut watch = store.hub().subscribe();
        put(&store, "/secrets", "s");
        let event = watch.try_recv().expect("the write's event");
        // The hub keeps the event until every receiver read it: the cache's has not.
        assert_eq!(
            Arc::strong_count(&event),
            2,
            "held by the hub for the cache"
        );
        informers.catch_up(&store);
        assert_eq!(
            Arc::strong_count(&event),
            1,
            "released once the cache read it"
        );
    }

    /// Issue 34: parsed managedFields were the larger part of each cached object, and a kind's
    /// pending events held whole objects and their previous states until it was next listed.
    #[test]
    fn the_cache_keeps_no_managed_fields_and_no_events() {
        let store = Store::open(None).expect("in-memory store");
        let informers = Informers::default();
        let with_fields = |name: &str| {
            let name = name.to_string();
            store
                .write(move |w| {
                    let rv = w.next_rv()?;
                    let obj = json!({"metadata": {"name": name, "namespace": "default",
                        "resourceVersion": rv.to_string(),
                        "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {"f:k": {}}}}]},
                        "data": {"k": "v"}});
                    w.put("/configmaps", "default", &name, rv, obj, EventType::Added)?;
                    Ok(())
                })
                .expect("write");
        };
        with_fields("read");
        let listed = informers.list(&store, "/configmaps");
        assert_eq!(
            listed[0]["metadata"].get("managedFields"),
            None,
            "read: {listed:?}"
        );
        assert_eq!(listed[0]["data"]["k"], "v");
        let mut watch = store.hub().subscribe();
        with_fields("changed");
        let event = watch.try_recv().expect("the write's event");
        informers.catch_up(&store);
        assert_eq!(
            Arc::strong_count(&event),
            1,
            "the pending change holds no event"
        );
        let listed = informers.list(&store, "/configmaps");
        assert_eq!(names(&listed), ["changed", "read"]);
        assert_eq!(listed[0]["metadata"].get("managedFields"), None);
        assert_eq!(
            listed[0]["metadata"]["resourceVersion"],
            event.rv.to_string()
        );
        assert!(
            store
                .get("/configmaps", "default", "changed")
                .expect("get")
                .is_some_and(|o| o["metadata"]["managedFields"].is_array()),
            "the store keeps them"
        );
    }

    #[test]
    fn missed_events_make_the_kind_read_again() {
        let store = Store::open(None).expect("in-memory store");
        let informers = Informers::default();
        put(&store, "/configmaps", "a");
        assert_eq!(informers.list(&store, "/configmaps").len(), 1);
        // More changes than the hub buffers: the receiver lags, the caches are dropped.
        for n in 0..crate::storage::events::EVENT_BUFFER + 10 {
            put(&store, "/secrets", &format!("s{n}"));
        }
        put(&store, "/configmaps", "b");
        assert_eq!(informers.list(&store, "/configmaps").len(), 2);
        assert_eq!(informers.reads(), 2, "read again after the lag");
    }
}
