//! The commit-exact fault seam (cargo feature `fault-injection`, off by default; only test crates turn it
//! on, through their dev-dependencies): with `PICELI_FAULT_ABORT_AFTER_COMMIT=N` set, the process calls
//! [`std::process::abort`] right after the N-th successful journal commit it makes — a real kill, with no
//! destructors, no unwinding and no cleanup — so tests can prove recovery from every commit point.
//!
//! A commit is one [`Journal`](super::Journal) write transaction (a plan saved, a release begun, a step
//! started or finished, a release or deploy stage recorded, check results); creating a new journal's
//! schema is not counted.
//!
//! Without the feature [`after_commit`] is an empty function and the variable is never read.

/// The environment variable naming the commit to abort after (1 = the first).
pub const ABORT_AFTER_COMMIT: &str = "PICELI_FAULT_ABORT_AFTER_COMMIT";

/// Called after every successful commit of a journal state change.
#[cfg(feature = "fault-injection")]
pub(crate) fn after_commit() {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static TARGET: OnceLock<Option<u64>> = OnceLock::new();
    static COMMITS: AtomicU64 = AtomicU64::new(0);
    let target = TARGET.get_or_init(|| {
        std::env::var(ABORT_AFTER_COMMIT)
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    if let Some(n) = *target
        && COMMITS.fetch_add(1, Ordering::SeqCst) + 1 == n
    {
        std::process::abort();
    }
}

/// Called after every successful commit of a journal state change (no-op: feature off).
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn after_commit() {}
