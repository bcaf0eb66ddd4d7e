//! Change events: their storage form and the in-process hub that fans them out to watches, in
//! resourceVersion order, including events other processes wrote to a shared database.

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, params};
use serde_json::Value;
use tokio::sync::broadcast;

use super::StoreError;

/// The watch event types the store records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object was changed.
    Modified,
    /// The object was deleted (the event holds its last state).
    Deleted,
}

impl EventType {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }

    fn parse(s: &str) -> EventType {
        match s {
            "ADDED" => EventType::Added,
            "DELETED" => EventType::Deleted,
            _ => EventType::Modified,
        }
    }
}

/// One change to one object.
#[derive(Debug, Clone)]
pub struct Event {
    /// The resource version of the change.
    pub rv: u64,
    /// The resource's store key (`GROUP/PLURAL`, `/pods` for the core group).
    pub rk: String,
    /// The object's namespace (`""` for cluster-scoped types).
    pub ns: String,
    /// The object's name.
    pub name: String,
    /// What happened to the object.
    pub kind: EventType,
    /// The object after the change (its last state, for a deletion).
    pub object: Arc<Value>,
    /// The object before a MODIFIED change, when this process made it (lets watches with selectors
    /// turn "stopped matching" into DELETED and "started matching" into ADDED); a local write's
    /// without `metadata.managedFields` ([`super::Writer::attach_prev`]).
    pub prev: Option<Arc<Value>>,
}

/// How many events the hub buffers for slow watchers; a watcher further behind gets 410 Expired
/// and re-lists (as with a real API server's watch cache).
pub const EVENT_BUFFER: usize = 4096;

/// Fans events out to subscribers in resourceVersion order.
pub struct Hub {
    tx: broadcast::Sender<Arc<Event>>,
    last: Mutex<u64>,
    /// The resourceVersion of the last published change per resource key (cache invalidation).
    /// Read by every authorization's staleness stamps, written by every write: a read-write lock.
    changed: std::sync::RwLock<std::collections::HashMap<String, u64>>,
}

impl Hub {
    /// A hub that has published everything up to `last`.
    pub fn new(last: u64) -> Hub {
        let (tx, _) = broadcast::channel(EVENT_BUFFER);
        Hub {
            tx,
            last: Mutex::new(last),
            changed: Default::default(),
        }
    }

    /// The resourceVersion of the last change of `rk` this hub published (0: none yet). Local
    /// writes count when they return; other processes' writes once polled.
    pub fn last_change(&self, rk: &str) -> u64 {
        self.changed
            .read()
            .map(|m| m.get(rk).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// The newest of [`Hub::last_change`] over `keys`, read under one lock.
    pub fn last_change_of(&self, keys: &[&str]) -> u64 {
        self.changed
            .read()
            .map(|m| {
                keys.iter()
                    .filter_map(|k| m.get(*k).copied())
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
    }

    fn emit(&self, event: Arc<Event>) {
        if let Ok(mut m) = self.changed.write() {
            match m.get_mut(&event.rk) {
                Some(rv) => *rv = event.rv,
                None => {
                    m.insert(event.rk.clone(), event.rv);
                }
            }
        }
        let _ = self.tx.send(event);
    }

    /// How many published events the hub still holds because some receiver has not read them yet
    /// (a watch, the controllers' loop, the informer cache): what the hub keeps alive (issue 34).
    pub fn held(&self) -> usize {
        self.tx.len()
    }

    /// A receiver of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx.subscribe()
    }

    /// Publishes an event this process just committed; events of other processes that precede it are
    /// read from the database and published first.
    pub fn publish_local(&self, conn: &Connection, event: Arc<Event>) {
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if event.rv <= *last {
            return;
        }
        if event.rv > *last + 1
            && let Ok(missed) = read_after_with_prev(conn, *last)
        {
            for e in missed.into_iter().filter(|e| e.rv < event.rv) {
                self.emit(e);
            }
        }
        *last = event.rv;
        self.emit(event);
    }

    /// Publishes whatever other processes committed since the last published event.
    pub fn catch_up(&self, conn: &Connection) {
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if let Ok(missed) = read_after_with_prev(conn, *last) {
            for e in missed {
                *last = e.rv;
                self.emit(e);
            }
        }
    }
}

/// Stored events after `rv`, oldest first, without previous states; 410 Expired if the history no
/// longer reaches back to `rv`. Called in one read transaction (the callers above): another process's
/// compaction between the check and the read would otherwise leave a silent gap (issue 34).
fn read_rows(conn: &Connection, rv: u64) -> Result<Vec<Event>, StoreError> {
    let db = StoreError::Db;
    let compacted: i64 = conn
        .query_row("SELECT value FROM meta WHERE key = 'compacted'", [], |r| {
            r.get(0)
        })
        .map_err(db)?;
    if (rv as i64) < compacted {
        return Err(StoreError::Compacted {
            requested: rv,
            compacted: compacted as u64,
        });
    }
    let mut stmt = conn
        .prepare_cached("SELECT rv, rk, ns, name, type, data FROM events WHERE rv > ?1 ORDER BY rv")
        .map_err(db)?;
    let mut rows = stmt.query(params![rv as i64]).map_err(db)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(db)? {
        let data: String = row.get(5).map_err(db)?;
        let object = serde_json::from_str(&data).map_err(StoreError::Corrupt)?;
        let kind: String = row.get(4).map_err(db)?;
        out.push(Event {
            rv: row.get::<_, i64>(0).map_err(db)? as u64,
            rk: row.get(1).map_err(db)?,
            ns: row.get(2).map_err(db)?,
            name: row.get(3).map_err(db)?,
            kind: EventType::parse(&kind),
            object: Arc::new(object),
            prev: None,
        });
    }
    Ok(out)
}

/// Stored events after `rv` (as [`read_rows`]), shared.
pub fn read_after(conn: &Connection, rv: u64) -> Result<Vec<Arc<Event>>, StoreError> {
    let snapshot = conn.unchecked_transaction().map_err(StoreError::Db)?;
    let events = read_rows(&snapshot, rv)?;
    snapshot.commit().map_err(StoreError::Db)?;
    Ok(events.into_iter().map(Arc::new).collect())
}

/// Like [`read_after`], each MODIFIED event with the object's state before it
/// ([`super::prev::attach`]): what a watch with selectors resumed from a version needs to turn
/// "stopped matching" into DELETED, and local watches need of other processes' changes.
pub fn read_after_with_prev(conn: &Connection, rv: u64) -> Result<Vec<Arc<Event>>, StoreError> {
    let snapshot = conn.unchecked_transaction().map_err(StoreError::Db)?;
    let mut events = read_rows(&snapshot, rv)?;
    super::prev::attach(&snapshot, rv, &mut events)?;
    snapshot.commit().map_err(StoreError::Db)?;
    Ok(events.into_iter().map(Arc::new).collect())
}
