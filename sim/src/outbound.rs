//! The runtime of the simulator's own outgoing HTTP calls (admission webhooks, the kubelet's image
//! pulls), which are made from blocking threads (the write pipeline, the controller loop) and waited
//! for there.

use std::future::Future;
use std::sync::OnceLock;

/// Runs a call to completion on the calling (blocking) thread, on the outgoing calls' runtime: a
/// current-thread runtime with no thread of its own, driven by whichever caller is waiting for a call.
/// A call's connection task, its TLS and its socket are then run on the thread that waits for the
/// response — no hand-off to another thread and back, as with a blocking socket — while a pooled
/// connection stays registered with one runtime whichever thread calls next. Concurrent callers take
/// turns driving it (tokio hands the runtime over when a caller's call is done).
pub(crate) fn block_on<F: Future>(call: F) -> Result<F::Output, String> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for outgoing calls: {e}"))
    });
    match runtime {
        Ok(rt) => Ok(rt.block_on(call)),
        Err(e) => Err(e.clone()),
    }
}
