//! The object store: SQLite (WAL) holding every object, one resourceVersion counter for the whole
//! cluster and a bounded history of change events for watches.

mod checkpoint;
mod compaction;
mod error;
pub(crate) mod events;
mod prev;
mod schema;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

pub use error::StoreError;
pub use events::{Event, EventType, Hub};

use crate::error::SimError;
use crate::status::ApiError;

/// How many change events are kept for watches before older ones are compacted away.
pub const DEFAULT_HISTORY: u64 = 20_000;

/// The object store shared by all request handlers of one simulator process.
pub struct Store {
    conn: Mutex<Connection>,
    hub: Arc<Hub>,
    history: u64,
    file_backed: bool,
    /// Checkpoints the WAL of a file-backed store (declared last: stops after the connection's last use).
    _checkpointer: Option<checkpoint::Checkpointer>,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Page {
    /// The objects of the page.
    pub items: Vec<Stored>,
    /// The resource version the list was read at.
    pub rv: u64,
    /// Whether more matching objects follow.
    pub more: bool,
}

/// One page of a list, each object as whatever the caller kept of it.
#[derive(Debug, Clone)]
pub struct RawPage<T> {
    /// Namespace, name and the kept value.
    pub items: Vec<(String, String, T)>,
    /// The resource version the list was read at.
    pub rv: u64,
    /// Whether more matching objects follow.
    pub more: bool,
}

/// A stored object with its storage coordinates.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The namespace (`""` for cluster-scoped types).
    pub ns: String,
    /// The name.
    pub name: String,
    /// The object.
    pub object: Value,
}

fn db_err(e: rusqlite::Error) -> StoreError {
    StoreError::Db(e)
}

fn parse(data: &str) -> Result<Value, StoreError> {
    serde_json::from_str(data).map_err(StoreError::Corrupt)
}

impl Store {
    /// Opens (creating if needed) `dir/state.db`, or an in-memory database when `dir` is `None`.
    pub fn open(dir: Option<&Path>) -> Result<Store, SimError> {
        let conn = match dir {
            Some(d) => Connection::open(d.join("state.db"))?,
            None => Connection::open_in_memory()?,
        };
        schema::prepare(&conn, dir.is_some())?;
        let last = schema::current_rv(&conn)?;
        // Checkpoints run on their own thread; SQLite's automatic one (under the store's lock) only as
        // a safety net when writes never pause (or at its usual 1,000 pages without that thread).
        let checkpointer = dir.and_then(|d| checkpoint::Checkpointer::start(d.join("state.db")));
        if checkpointer.is_some() {
            conn.pragma_update(None, "wal_autocheckpoint", checkpoint::SAFETY_NET_PAGES)?;
        }
        Ok(Store {
            conn: Mutex::new(conn),
            hub: Arc::new(Hub::new(last)),
            history: DEFAULT_HISTORY,
            file_backed: dir.is_some(),
            _checkpointer: checkpointer,
        })
    }

    /// The event hub watches subscribe to.
    pub fn hub(&self) -> Arc<Hub> {
        self.hub.clone()
    }

    /// Whether other processes may write to the same database (so the hub must poll).
    pub fn file_backed(&self) -> bool {
        self.file_backed
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }

    /// The newest resourceVersion.
    pub fn current_rv(&self) -> Result<u64, StoreError> {
        schema::current_rv(&*self.lock()?).map_err(db_err)
    }

    /// One object.
    pub fn get(&self, rk: &str, ns: &str, name: &str) -> Result<Option<Value>, StoreError> {
        let conn = self.lock()?;
        get_in(&conn, rk, ns, name)
    }

    /// Objects of a type (in one namespace, or all when `ns` is `None`), ordered by namespace and name,
    /// starting after `after` (`ns/name`), plus the store's resourceVersion at the time of reading.
    pub fn list(
        &self,
        rk: &str,
        ns: Option<&str>,
        after: Option<&str>,
    ) -> Result<(Vec<Stored>, u64), ApiError> {
        let page = self.list_page(rk, ns, after, None, |_| true)?;
        Ok((page.items, page.rv))
    }

    /// Like [`Store::list`], keeping only objects `keep` accepts and stopping after `limit` of them.
    pub fn list_page(
        &self,
        rk: &str,
        ns: Option<&str>,
        after: Option<&str>,
        limit: Option<usize>,
        mut keep: impl FnMut(&Value) -> bool,
    ) -> Result<Page, ApiError> {
        let raw = self.list_raw(rk, ns, after, limit, |data| {
            Ok(Some(parse(data)?).filter(|v| keep(v)))
        })?;
        Ok(Page {
            items: raw
                .items
                .into_iter()
                .map(|(ns, name, object)| Stored { ns, name, object })
                .collect(),
            rv: raw.rv,
            more: raw.more,
        })
    }

    /// The listing primitive: `keep` sees each object's stored JSON and returns what to keep for it
    /// (`None` skips it), so callers that need no parsing can pass the JSON through untouched.
    pub fn list_raw<T>(
        &self,
        rk: &str,
        ns: Option<&str>,
        after: Option<&str>,
        limit: Option<usize>,
        mut keep: impl FnMut(&str) -> Result<Option<T>, ApiError>,
    ) -> Result<RawPage<T>, ApiError> {
        let (after_ns, after_name) = after.and_then(|a| a.split_once('/')).unwrap_or(("", ""));
        let mut conn = self.lock()?;
        let tx = conn.transaction().map_err(db_err)?;
        let rv = schema::current_rv(&tx).map_err(db_err)?;
        let mut items = Vec::new();
        let mut more = false;
        {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT ns, name, data FROM objects WHERE rk = ?1 AND (?2 IS NULL OR ns = ?2) \
                     AND (ns > ?3 OR (ns = ?3 AND name > ?4)) ORDER BY ns, name",
                )
                .map_err(db_err)?;
            let mut rows = stmt
                .query(params![rk, ns, after_ns, after_name])
                .map_err(db_err)?;
            while let Some(row) = rows.next().map_err(db_err)? {
                let data = row
                    .get_ref(2)
                    .map_err(db_err)?
                    .as_str()
                    .map_err(|e| StoreError::Db(e.into()))?;
                let Some(kept) = keep(data)? else { continue };
                if limit.is_some_and(|l| items.len() >= l) {
                    more = true;
                    break;
                }
                items.push((
                    row.get(0).map_err(db_err)?,
                    row.get(1).map_err(db_err)?,
                    kept,
                ));
            }
        }
        tx.commit().map_err(db_err)?;
        Ok(RawPage { items, rv, more })
    }

    /// Change events after `rv`, oldest first; `Err(Gone)` when history before them was compacted.
    pub fn events_after(&self, rv: u64) -> Result<Vec<Arc<Event>>, StoreError> {
        let conn = self.lock()?;
        events::read_after(&conn, rv)
    }

    /// Like [`Store::events_after`], each MODIFIED event with the object's previous state (for
    /// watches with selectors: an object that stopped matching is DELETED to them).
    pub fn events_after_with_prev(&self, rv: u64) -> Result<Vec<Arc<Event>>, StoreError> {
        let conn = self.lock()?;
        events::read_after_with_prev(&conn, rv)
    }

    /// Runs `f` in one write transaction (serialised across processes), then publishes its events.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut conn = self.lock()?;
        let (out, events) = {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(db_err)?;
            let mut w = Writer {
                tx,
                events: Vec::new(),
            };
            let out = f(&mut w)?;
            let Writer { tx, events } = w;
            if let Some(last) = events.last().filter(|e| e.rv % 1000 == 0) {
                let cut = last.rv.saturating_sub(self.history);
                tx.execute("DELETE FROM events WHERE rv <= ?1", params![cut as i64])
                    .map_err(db_err)?;
                tx.execute(
                    "UPDATE meta SET value = MAX(value, ?1) WHERE key = 'compacted'",
                    params![cut as i64],
                )
                .map_err(db_err)?;
            }
            tx.commit().map_err(db_err)?;
            (out, events)
        };
        // Published while the connection is still locked, so the hub sees local events in order.
        for e in events {
            self.hub.publish_local(&conn, Arc::new(e));
        }
        Ok(out)
    }

    /// Takes or renews the controller leadership row for `holder` until `now_ms + ttl_ms`; true when
    /// `holder` leads (the row was free, expired, or already held by it).
    pub fn try_lead(&self, holder: &str, now_ms: i64, ttl_ms: i64) -> Result<bool, StoreError> {
        let conn = self.lock()?;
        conn.execute(
            "INSERT INTO leader (id, holder, expires) VALUES (0, ?1, ?2) ON CONFLICT(id) DO UPDATE \
             SET holder = ?1, expires = ?2 WHERE leader.holder = ?1 OR leader.expires < ?3",
            params![holder, now_ms + ttl_ms, now_ms],
        )
        .map_err(db_err)?;
        let held: String = conn
            .query_row("SELECT holder FROM leader WHERE id = 0", [], |r| r.get(0))
            .map_err(db_err)?;
        Ok(held == holder)
    }

    /// The current leadership holder, if any.
    pub fn lead_holder(&self) -> Option<String> {
        let conn = self.lock().ok()?;
        conn.query_row("SELECT holder FROM leader WHERE id = 0", [], |r| r.get(0))
            .optional()
            .ok()
            .flatten()
    }

    /// Gives up leadership if `holder` has it (on shutdown, so another process takes over at once).
    pub fn release_lead(&self, holder: &str) {
        if let Ok(conn) = self.lock() {
            let _ = conn.execute("DELETE FROM leader WHERE holder = ?1", params![holder]);
        }
    }

    /// Publishes events written by other processes (file-backed stores only).
    pub fn poll_foreign(&self) {
        if let Ok(conn) = self.lock() {
            self.hub.catch_up(&conn);
        }
    }
}

fn get_in(conn: &Connection, rk: &str, ns: &str, name: &str) -> Result<Option<Value>, StoreError> {
    let data: Option<String> = conn
        .prepare_cached("SELECT data FROM objects WHERE rk = ?1 AND ns = ?2 AND name = ?3")
        .map_err(db_err)?
        .query_row(params![rk, ns, name], |r| r.get(0))
        .optional()
        .map_err(db_err)?;
    data.map(|d| parse(&d)).transpose()
}

/// A write transaction.
pub struct Writer<'a> {
    tx: rusqlite::Transaction<'a>,
    events: Vec<Event>,
}

impl Writer<'_> {
    /// One object, as of this transaction.
    pub fn get(&self, rk: &str, ns: &str, name: &str) -> Result<Option<Value>, StoreError> {
        get_in(&self.tx, rk, ns, name)
    }

    /// All objects of a type in a namespace (or everywhere), as of this transaction.
    pub fn list(&self, rk: &str, ns: Option<&str>) -> Result<Vec<Stored>, StoreError> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT ns, name, data FROM objects WHERE rk = ?1 AND (?2 IS NULL OR ns = ?2) ORDER BY ns, name")
            .map_err(db_err)?;
        let mut rows = stmt.query(params![rk, ns]).map_err(db_err)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db_err)? {
            let data: String = row.get(2).map_err(db_err)?;
            out.push(Stored {
                ns: row.get(0).map_err(db_err)?,
                name: row.get(1).map_err(db_err)?,
                object: parse(&data)?,
            });
        }
        Ok(out)
    }

    /// Every distinct resource key that has objects in a namespace.
    pub fn keys_in_namespace(&self, ns: &str) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT DISTINCT rk FROM objects WHERE ns = ?1")
            .map_err(db_err)?;
        let rows = stmt
            .query_map(params![ns], |r| r.get::<_, String>(0))
            .map_err(db_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_err)
    }

    /// Allocates the next resourceVersion.
    pub fn next_rv(&mut self) -> Result<u64, StoreError> {
        self.tx
            .query_row(
                "UPDATE meta SET value = value + 1 WHERE key = 'rv' RETURNING value",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|v| v as u64)
            .map_err(db_err)
    }

    /// Stores `object` (whose `metadata.resourceVersion` must already be `rv`) and records the event.
    pub fn put(
        &mut self,
        rk: &str,
        ns: &str,
        name: &str,
        rv: u64,
        object: Value,
        kind: EventType,
    ) -> Result<(), StoreError> {
        let data = serde_json::to_string(&object).map_err(StoreError::Encode)?;
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO objects (rk, ns, name, rv, data) VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(db_err)?
            .execute(params![rk, ns, name, rv as i64, data])
            .map_err(db_err)?;
        self.record(rk, ns, name, rv, object, kind, data)
    }

    /// Removes an object; `last` is its final state (with the deleting resourceVersion) for watchers.
    pub fn delete(
        &mut self,
        rk: &str,
        ns: &str,
        name: &str,
        rv: u64,
        last: Value,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("DELETE FROM objects WHERE rk = ?1 AND ns = ?2 AND name = ?3")
            .map_err(db_err)?
            .execute(params![rk, ns, name])
            .map_err(db_err)?;
        let data = serde_json::to_string(&last).map_err(StoreError::Encode)?;
        self.record(rk, ns, name, rv, last, EventType::Deleted, data)
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        rk: &str,
        ns: &str,
        name: &str,
        rv: u64,
        object: Value,
        kind: EventType,
        data: String,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO events (rv, rk, ns, name, type, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(db_err)?
            .execute(params![rv as i64, rk, ns, name, kind.as_str(), data])
            .map_err(db_err)?;
        self.events.push(Event {
            rv,
            rk: rk.into(),
            ns: ns.into(),
            name: name.into(),
            kind,
            object: Arc::new(object),
            prev: None,
        });
        Ok(())
    }

    /// Attaches the previous state of the object to the event just recorded, without
    /// `metadata.managedFields`: watches only match it against their label and field selectors, and
    /// parsed those fields were the larger part of each event the hub held in a burst of writes
    /// (issue 34).
    pub fn attach_prev(&mut self, mut prev: Value) {
        if let Some(meta) = prev.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        if let Some(e) = self.events.last_mut() {
            e.prev = Some(Arc::new(prev));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn put(store: &Store, name: &str) -> u64 {
        store
            .write(|w| {
                let rv = w.next_rv()?;
                w.put(
                    "/configmaps",
                    "default",
                    name,
                    rv,
                    json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}}),
                    EventType::Added,
                )?;
                Ok(rv)
            })
            .expect("write")
    }

    #[test]
    fn one_counter_orders_all_writes() {
        let store = Store::open(None).expect("open");
        let a = put(&store, "a");
        let b = put(&store, "b");
        assert!(b > a);
        assert_eq!(store.current_rv().expect("rv"), b);
        let (items, rv) = store
            .list("/configmaps", Some("default"), None)
            .expect("list");
        assert_eq!(items.len(), 2);
        assert_eq!(rv, b);
        let (after, _) = store
            .list("/configmaps", None, Some("default/a"))
            .expect("list after");
        assert_eq!(after.len(), 1);
        assert_eq!(store.events_after(a).expect("events").len(), 1);
    }

    #[test]
    fn state_survives_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let store = Store::open(Some(dir.path())).expect("open");
            put(&store, "kept");
        }
        let store = Store::open(Some(dir.path())).expect("reopen");
        assert!(
            store
                .get("/configmaps", "default", "kept")
                .expect("get")
                .is_some()
        );
    }

    /// Between bursts of writes the WAL is copied into the database and starts over, although the
    /// store's own connection checkpoints only at 8,192 pages (without the checkpointer the WAL grows to
    /// the ~24 MB written here).
    #[test]
    fn the_wal_starts_over_between_bursts_of_writes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(Some(dir.path())).expect("open");
        let wal = dir.path().join("state.db-wal");
        let big = "x".repeat(8_000);
        let mut largest = 0;
        for i in 0..1_500 {
            store
                .write(|w| {
                    let rv = w.next_rv()?;
                    let name = format!("cm-{i}");
                    let obj = json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}, "data": {"v": big}});
                    w.put("/configmaps", "default", &name, rv, obj, EventType::Added)?;
                    Ok::<_, ApiError>(rv)
                })
                .expect("write");
            if i % 150 == 149 {
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            largest = largest.max(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0));
        }
        assert!(largest < 12 << 20, "the WAL grew to {largest} bytes");
        drop(store);
        let store = Store::open(Some(dir.path())).expect("reopen");
        assert!(
            store
                .get("/configmaps", "default", "cm-1499")
                .expect("get")
                .is_some()
        );
    }

    /// Issue 34: the previous state rides along with every change event the hub holds, and is only
    /// matched against selectors; parsed, managedFields were the larger part of it.
    #[test]
    fn a_changes_previous_state_is_kept_without_managed_fields() {
        let store = Store::open(None).expect("open");
        let fields =
            json!([{"manager": "m", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}}}]);
        let object = |rv: u64, a: &str| {
            json!({"metadata": {"name": "o", "resourceVersion": rv.to_string(), "labels": {"a": a},
                "managedFields": fields}})
        };
        let mut events = store.hub().subscribe();
        let first = store
            .write(|w| {
                let rv = w.next_rv()?;
                w.put(
                    "/configmaps",
                    "default",
                    "o",
                    rv,
                    object(rv, "1"),
                    EventType::Added,
                )?;
                Ok(rv)
            })
            .expect("create");
        store
            .write(|w| {
                let rv = w.next_rv()?;
                w.put(
                    "/configmaps",
                    "default",
                    "o",
                    rv,
                    object(rv, "2"),
                    EventType::Modified,
                )?;
                w.attach_prev(object(first, "1"));
                Ok(rv)
            })
            .expect("update");
        let _added = events.try_recv().expect("the creation");
        let changed = events.try_recv().expect("the change");
        let prev = changed.prev.as_deref().expect("a previous state");
        assert_eq!(prev["metadata"]["labels"]["a"], "1");
        assert_eq!(prev["metadata"].get("managedFields"), None, "{prev}");
        assert_eq!(changed.object["metadata"]["managedFields"], fields);
    }

    #[test]
    fn one_leader_at_a_time() {
        let store = Store::open(None).expect("open");
        assert!(store.try_lead("a", 1_000, 500).expect("lead"));
        assert!(!store.try_lead("b", 1_200, 500).expect("lead"));
        assert!(store.try_lead("a", 1_400, 500).expect("renew"));
        assert!(store.try_lead("b", 2_000, 500).expect("expired"));
        store.release_lead("b");
        assert!(store.try_lead("a", 2_100, 500).expect("released"));
    }

    #[test]
    fn failed_transactions_write_nothing() {
        let store = Store::open(None).expect("open");
        let before = store.current_rv().expect("rv");
        let r: Result<(), ApiError> = store.write(|w| {
            w.next_rv()?;
            Err(ApiError::bad_request("no"))
        });
        assert!(r.is_err());
        assert_eq!(store.current_rv().expect("rv"), before);
    }
}
