//! The journal's database file: where it lives, how it is opened, and its versioned schema.
//!
//! The schema version is `PRAGMA user_version`. A fresh file (version 0) gets the current schema in one
//! transaction; an older one is migrated step by step (1 → 2 adds the deploy and check tables, 2 → 3 the
//! images a deploy run builds and the build cache's index, 3 → 4 the approvals, with a `migrated` one for
//! the plan of each earlier release — only an approval could start one — and none for a deploy run: an
//! unfinished run of an older journal is refused by `deploy --resume` with PCL0124, 4 → 5 the approvals'
//! seals, none for the rows already there: PCL0220 until they are approved again, 5 → 6 the backups of the
//! objects a `replace` step deletes); a file of
//! the current version is used as is; a newer one is refused so an old piceli never
//! writes rows it does not understand. A future change adds a step to [`migrate`] and bumps
//! [`SCHEMA_VERSION`].

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::error::{JournalError, sql};

/// The database file's name inside the state directory.
pub const DB_FILE: &str = "journal.db";

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = 6;

/// How long a statement waits for another process's write to finish before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Version 1: plans by hash, numbered releases, one row per step, and the control flags (`stop`).
pub(crate) const SCHEMA_V1: &str = "
CREATE TABLE plans (
    hash       TEXT PRIMARY KEY NOT NULL,
    target     TEXT NOT NULL,
    plan_json  TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE releases (
    number      INTEGER PRIMARY KEY NOT NULL CHECK (number > 0),
    plan_hash   TEXT NOT NULL REFERENCES plans(hash),
    kind        TEXT NOT NULL CHECK (kind IN ('apply', 'rollback')),
    state       TEXT NOT NULL
                CHECK (state IN ('running', 'succeeded', 'failed', 'stopped', 'superseded')),
    started_at  TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX releases_by_state ON releases(state, number);
CREATE TABLE steps (
    release          INTEGER NOT NULL REFERENCES releases(number),
    idx              INTEGER NOT NULL CHECK (idx >= 0),
    kind             TEXT NOT NULL,
    namespace        TEXT,
    name             TEXT NOT NULL,
    action           TEXT NOT NULL,
    level            INTEGER NOT NULL CHECK (level >= 0),
    desired_digest   TEXT,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'started', 'done', 'failed')),
    detail           TEXT,
    uid              TEXT,
    resource_version TEXT,
    digest           TEXT,
    started_at       TEXT,
    finished_at      TEXT,
    PRIMARY KEY (release, idx)
) WITHOUT ROWID;
CREATE TABLE control (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
";

/// Version 2 adds what `deploy` and `check` record: one row per deploy run (its stage, so
/// `deploy --resume` continues it) and one row per check result, grouped by check run.
pub(crate) const SCHEMA_V2: &str = "
CREATE TABLE deploy_runs (
    id               INTEGER PRIMARY KEY NOT NULL,
    plan_hash        TEXT NOT NULL REFERENCES plans(hash),
    stage            TEXT NOT NULL,
    state            TEXT NOT NULL,
    release          INTEGER,
    rollback_release INTEGER,
    message          TEXT NOT NULL DEFAULT '',
    started_at       TEXT NOT NULL,
    finished_at      TEXT
);
CREATE TABLE check_results (
    run         INTEGER NOT NULL,
    idx         INTEGER NOT NULL,
    deploy_run  INTEGER REFERENCES deploy_runs(id),
    release     INTEGER,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    passed      INTEGER NOT NULL,
    attempts    INTEGER NOT NULL,
    message     TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (run, idx)
) WITHOUT ROWID;
";

/// Version 3 adds the images `deploy` builds: one row per image of a deploy run (what it runs and the
/// source identity it was built from), and the index of built images kept in the state directory's build
/// cache (so an approved deploy does not build again what its unapproved run built).
pub(crate) const SCHEMA_V3: &str = "
CREATE TABLE deploy_images (
    run         INTEGER NOT NULL REFERENCES deploy_runs(id),
    idx         INTEGER NOT NULL,
    image       TEXT NOT NULL,
    reference   TEXT NOT NULL,
    destination TEXT NOT NULL,
    inputs      TEXT NOT NULL,
    git_commit  TEXT,
    dirty       INTEGER NOT NULL,
    toolchain   TEXT NOT NULL,
    unchanged   INTEGER NOT NULL,
    PRIMARY KEY (run, idx)
) WITHOUT ROWID;
CREATE TABLE image_builds (
    image       TEXT NOT NULL,
    inputs      TEXT NOT NULL,
    digest      TEXT NOT NULL,
    built_at    TEXT NOT NULL,
    PRIMARY KEY (image, inputs)
) WITHOUT ROWID;
";

/// Version 4 adds what approved each plan the engine carries out (see `approvals.rs`): `resume` and
/// `deploy --resume` continue only a plan with an approval (a deploy run's bound to that run).
const SCHEMA_V4: &str = "
CREATE TABLE approvals (
    id          INTEGER PRIMARY KEY NOT NULL,
    plan_hash   TEXT NOT NULL REFERENCES plans(hash),
    deploy_run  INTEGER REFERENCES deploy_runs(id),
    kind        TEXT NOT NULL CHECK (kind IN ('approved', 'unchanged', 'rollback', 'migrated')),
    command     TEXT NOT NULL,
    approved_at TEXT NOT NULL
);
CREATE INDEX approvals_by_plan ON approvals(plan_hash, deploy_run);
";

/// The migration to version 4 records, for the plan of each release an older journal holds, the approval
/// that must have started it (releases began only at `apply --approve`, `deploy --approve` or an automatic
/// rollback). Unfinished deploy runs get none: which plan such a run was approved for is not known.
const MIGRATE_V4_RELEASES: &str = "
INSERT INTO approvals (plan_hash, deploy_run, kind, command, approved_at)
SELECT plan_hash, NULL, 'migrated',
       'the journal migration to schema 4 (release ' || MIN(number) || ' applied this plan)',
       MIN(started_at)
FROM releases GROUP BY plan_hash ORDER BY MIN(number);
";

/// Version 5 seals approvals: each row written from now on carries a keyed digest under the approving
/// user's key (`seal.rs`). Rows of earlier versions keep none, so the engine no longer trusts them alone:
/// a release or deploy run they started is resumed only after its plan is approved again.
const SCHEMA_V5: &str = "ALTER TABLE approvals ADD COLUMN seal TEXT;";

/// Version 6 keeps a backup of each object a `replace` step deletes (see `backups.rs`): the object as it
/// was, secret values as digests.
const SCHEMA_V6: &str = "
CREATE TABLE backups (
    release     INTEGER NOT NULL REFERENCES releases(number),
    idx         INTEGER NOT NULL CHECK (idx >= 0),
    kind        TEXT NOT NULL,
    namespace   TEXT,
    name        TEXT NOT NULL,
    uid         TEXT NOT NULL,
    object_json TEXT NOT NULL,
    taken_at    TEXT NOT NULL,
    PRIMARY KEY (release, idx)
) WITHOUT ROWID;
";

/// Creates `dir` and its parents if missing; new directories are `0700` on Unix (the journal describes the
/// cluster, so it is private to its owner). An existing directory keeps its mode.
pub fn create_dir(dir: &Path) -> Result<(), JournalError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| JournalError::Io {
        action: "create the state directory",
        path: dir.to_path_buf(),
        source,
    })
}

/// Opens `DIR/journal.db` in WAL mode with `synchronous=FULL`, foreign keys on and a busy timeout, and
/// brings its schema to [`SCHEMA_VERSION`].
///
/// Only a missing file makes a new journal, and that one appears complete or not at all (see
/// [`create`]). An existing file that is empty, is not SQLite, or lacks a table of the schema is refused as
/// [`JournalError::Corrupt`]: re-initializing it would silently drop its history and rollback points.
pub(crate) fn open(dir: &Path) -> Result<Connection, JournalError> {
    create_dir(dir)?;
    let path = dir.join(DB_FILE);
    match std::fs::metadata(&path) {
        Ok(meta) if meta.len() == 0 => {
            return Err(JournalError::Corrupt(format!(
                "`{}` is empty (0 bytes): it is not the journal this state directory had",
                path.display()
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(dir, &path)?,
        Err(source) => {
            return Err(JournalError::Io {
                action: "read",
                path,
                source,
            });
        }
    }
    // Never create here: the file exists (or was just linked into place).
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&path, flags).map_err(sql("opening the journal"))?;
    let conn = configure(conn)?;
    let conn = migrate(conn, &path)?;
    check_tables(&conn, &path)?;
    Ok(conn)
}

/// WAL lets `stop`, `history` and `status` read while an apply writes; FULL fsyncs the WAL on every commit,
/// so a committed `started` survives a power cut.
fn configure(conn: Connection) -> Result<Connection, JournalError> {
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql("setting the busy timeout"))?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(sql("switching the journal to WAL"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(JournalError::Corrupt(format!(
            "SQLite kept journal_mode `{mode}` instead of `wal`"
        )));
    }
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .map_err(sql("configuring the journal"))?;
    Ok(conn)
}

/// Makes a new journal at `path`: the schema is written into a private (`0600`) file beside it, then
/// hard-linked into place, which fails rather than replaces when another process made one first. So
/// `journal.db` never exists half-made (a kill leaves at most a stray `journal.db.new-*`), and its
/// `-wal`/`-shm` files, which SQLite creates with the database file's mode, are `0600` too whatever the
/// umask or the directory's mode.
fn create(dir: &Path, path: &Path) -> Result<(), JournalError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let fresh = dir.join(format!("{DB_FILE}.new-{}-{nanos}", std::process::id()));
    let io = |action: &'static str, at: &Path| {
        let path = at.to_path_buf();
        move |source| JournalError::Io {
            action,
            path,
            source,
        }
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    drop(options.open(&fresh).map_err(io("create", &fresh))?);
    let made = (|| {
        let conn = Connection::open(&fresh).map_err(sql("creating the journal"))?;
        let conn = migrate(configure(conn)?, &fresh)?;
        // Everything into the main file, so linking it alone carries the whole schema.
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(sql("creating the journal"))?;
        drop(conn);
        match std::fs::hard_link(&fresh, path) {
            Ok(()) => Ok(()),
            // Another process made the journal first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            // A file system without hard links: rename, unless one appeared meanwhile.
            Err(_) if !path.exists() => std::fs::rename(&fresh, path).map_err(io("create", path)),
            Err(e) => Err(io("create", path)(e)),
        }
    })();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", fresh.display()));
    }
    made?;
    // The new name must survive a power cut like the commits after it.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The tables every journal of [`SCHEMA_VERSION`] has.
const TABLES: [&str; 10] = [
    "plans",
    "releases",
    "steps",
    "control",
    "deploy_runs",
    "check_results",
    "deploy_images",
    "image_builds",
    "approvals",
    "backups",
];

/// Refuses a journal whose schema version is current but which lacks one of its tables.
fn check_tables(conn: &Connection, path: &Path) -> Result<(), JournalError> {
    let action = "reading the schema";
    let mut stmt = conn
        .prepare("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)")
        .map_err(sql(action))?;
    for table in TABLES {
        let present: bool = stmt.query_row([table], |r| r.get(0)).map_err(sql(action))?;
        if !present {
            return Err(JournalError::Corrupt(format!(
                "`{}` has no `{table}` table",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Brings the schema to [`SCHEMA_VERSION`] in one immediate transaction (so two processes opening a fresh
/// file at once cannot both create it), or refuses a newer one.
fn migrate(mut conn: Connection, path: &Path) -> Result<Connection, JournalError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql("reading the schema version"))?;
    let found: i64 = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(sql("reading the schema version"))?;
    match found {
        0..=5 => {
            if found == 0 {
                tx.execute_batch(SCHEMA_V1)
                    .map_err(sql("creating the schema"))?;
            }
            if found <= 1 {
                tx.execute_batch(SCHEMA_V2)
                    .map_err(sql("migrating the schema to version 2"))?;
            }
            if found <= 2 {
                tx.execute_batch(SCHEMA_V3)
                    .map_err(sql("migrating the schema to version 3"))?;
            }
            if found <= 3 {
                tx.execute_batch(SCHEMA_V4)
                    .map_err(sql("migrating the schema to version 4"))?;
                tx.execute_batch(MIGRATE_V4_RELEASES)
                    .map_err(sql("migrating the schema to version 4"))?;
            }
            if found <= 4 {
                tx.execute_batch(SCHEMA_V5)
                    .map_err(sql("migrating the schema to version 5"))?;
            }
            tx.execute_batch(SCHEMA_V6)
                .map_err(sql("migrating the schema to version 6"))?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(sql("creating the schema"))?;
        }
        SCHEMA_VERSION => {}
        found if found > SCHEMA_VERSION => {
            return Err(JournalError::NewerSchema {
                path: path.to_path_buf(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        found => {
            return Err(JournalError::Corrupt(format!(
                "schema version {found} in `{}` is not one piceli ever wrote",
                path.display()
            )));
        }
    }
    tx.commit().map_err(sql("creating the schema"))?;
    Ok(conn)
}
