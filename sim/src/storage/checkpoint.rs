//! WAL checkpoints off the write path. With SQLite's automatic checkpoint, the write that grows the WAL
//! past 1,000 pages copies them into the database while it holds the store's lock, so every request
//! queued behind it waits (in a burst of 1,000 creates that was the p99 of a watcher's create→event
//! latency, and a third of the write rate: docs/benchmarks.md). Here a thread with a connection of its own
//! runs passive checkpoints, which do not block writers, five times a second; the next write after one
//! that copied everything starts the WAL over, so between bursts the file stays small. The store's own
//! connection checkpoints only past [`SAFETY_NET_PAGES`], for writes that never pause.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use rusqlite::Connection;

/// The store connection's own automatic checkpoint, kept as a safety net for writes that never pause
/// (the background checkpoint cannot restart a WAL that a writer is always appending to): 32 MiB of
/// 4 KiB pages.
pub(crate) const SAFETY_NET_PAGES: i64 = 8_192;

/// How often the checkpointer looks at the WAL.
const EVERY: Duration = Duration::from_millis(200);

/// The running checkpointer; stops (after a last checkpoint) when dropped.
pub(crate) struct Checkpointer {
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the database at `path` (whose own connection has automatic checkpoints
    /// off). `None` when the thread or its connection cannot be had: the caller then keeps SQLite's
    /// automatic checkpoints.
    pub(crate) fn start(path: PathBuf) -> Option<Checkpointer> {
        let conn = Connection::open(&path).ok()?;
        conn.busy_timeout(Duration::from_secs(10)).ok()?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sim-checkpoint".into())
            .spawn(move || {
                loop {
                    let last = match stopped.recv_timeout(EVERY) {
                        Err(RecvTimeoutError::Timeout) => false,
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    };
                    // A failed checkpoint (the database busy) is retried at the next turn.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    if last {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
