//! The SQLite schema of the store and its connection settings.

use rusqlite::Connection;

/// Sets pragmas (WAL for files) and creates the tables.
pub fn prepare(conn: &Connection, file_backed: bool) -> rusqlite::Result<()> {
    if file_backed {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS objects (
             rk TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
             rv INTEGER NOT NULL, data TEXT NOT NULL,
             PRIMARY KEY (rk, ns, name)) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS events (
             rv INTEGER PRIMARY KEY, rk TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
             type TEXT NOT NULL, data TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
         CREATE TABLE IF NOT EXISTS leader (
             id INTEGER PRIMARY KEY CHECK (id = 0), holder TEXT NOT NULL, expires INTEGER NOT NULL);
         INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 1), ('compacted', 0);",
    )
}

/// The newest resourceVersion handed out.
pub fn current_rv(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row("SELECT value FROM meta WHERE key = 'rv'", [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|v| v as u64)
}
