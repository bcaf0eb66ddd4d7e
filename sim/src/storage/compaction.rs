//! Compaction of the watch history, as etcd compaction is for kube-apiserver: how many events are
//! kept, and dropping those up to a resourceVersion so watches from before it get 410 Gone.

use rusqlite::params;

use super::{Store, StoreError, db_err, schema};

impl Store {
    /// Drops every stored event up to the current resourceVersion; returns that version.
    pub fn compact_now(&self) -> Result<u64, StoreError> {
        self.compact_to(None)
    }

    /// How many change events are kept before older ones are compacted away (default
    /// [`DEFAULT_HISTORY`]).
    pub fn set_history(&mut self, events: u64) {
        self.history = events.max(1);
    }

    /// Drops the stored events up to `rv` (the current resourceVersion when `None`), as an etcd
    /// compaction does: watches from an older resourceVersion get 410 Gone. Returns the version
    /// compacted to.
    pub fn compact_to(&self, rv: Option<u64>) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let current = schema::current_rv(&conn).map_err(db_err)?;
        let rv = rv.map_or(current, |r| r.min(current));
        conn.execute("DELETE FROM events WHERE rv <= ?1", params![rv as i64])
            .map_err(db_err)?;
        conn.execute(
            "UPDATE meta SET value = MAX(value, ?1) WHERE key = 'compacted'",
            params![rv as i64],
        )
        .map_err(db_err)?;
        Ok(rv)
    }
}
