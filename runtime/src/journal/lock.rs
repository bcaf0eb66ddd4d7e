//! The apply lock: one writer per state directory.
//!
//! `DIR/apply.lock` is locked exclusively with [`File::try_lock`] (an OS file lock, `flock` on Unix,
//! `LockFileEx` on Windows), so it is released when the [`ApplyLock`] drops and also when the process dies,
//! however it dies: there is never a stale lock to clean up by hand. The holder writes its pid into the file
//! so a refused second apply can say who holds it. The file itself is never deleted (deleting a lock file
//! races with processes that have it open); its content means something only while it is locked.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::JournalError;

/// The lock file's name inside the state directory.
pub const LOCK_FILE: &str = "apply.lock";

/// Holds the apply lock of one state directory until dropped.
#[derive(Debug)]
pub struct ApplyLock {
    file: File,
    path: PathBuf,
}

impl ApplyLock {
    /// Takes the lock of `dir` (created, `0700` on Unix, if missing) without waiting.
    ///
    /// Refused with [`JournalError::Locked`], naming the holder's pid, when any other open handle holds it
    /// (another process, or another `ApplyLock` of this process).
    pub(crate) fn acquire(dir: &Path) -> Result<ApplyLock, JournalError> {
        super::schema::create_dir(dir)?;
        let path = dir.join(LOCK_FILE);
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| JournalError::Io {
                action,
                path,
                source,
            }
        };
        // No truncation on open: the holder's pid must survive a refused attempt.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io("open the apply lock", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let pid = read_pid(&mut file);
                return Err(JournalError::Locked { path, pid });
            }
            Err(TryLockError::Error(e)) => return Err(io("lock", &path)(e)),
        }
        let pid = std::process::id();
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{pid}"))
            .and_then(|()| file.sync_data())
            .map_err(io("write the pid into", &path))?;
        Ok(ApplyLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ApplyLock {
    fn drop(&mut self) {
        // Clear the pid so nobody reads a dead holder's pid; closing the file releases the lock.
        let _ = self.file.set_len(0);
    }
}

/// The pid a holder wrote, if it has written one yet.
fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
