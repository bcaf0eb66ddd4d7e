//! Graceful deletion of Pods, as the pod strategy's `CheckGracefulDelete` decides it: a scheduled,
//! unfinished pod gets `deletionTimestamp` (now + grace period) and `deletionGracePeriodSeconds` and
//! stays `Terminating` until its kubelet removes it; `gracePeriodSeconds: 0` (`kubectl delete
//! --grace-period=0 --force`), unscheduled and finished pods are deleted at once.

use serde_json::{Value, json};

use crate::status::ApiError;
use crate::storage::{EventType, Writer};

/// The grace period when neither the request nor the pod names one.
const DEFAULT_GRACE_SECONDS: i64 = 30;

/// Marks a pod for graceful deletion (the Pod strategy's
/// [`graceful_delete`](crate::registry::strategy::Strategy::graceful_delete)); `None` when it is to
/// be deleted now.
pub fn graceful(
    w: &mut Writer<'_>,
    ns: &str,
    name: &str,
    pod: &Value,
    requested: Option<i64>,
) -> Result<Option<Value>, ApiError> {
    let grace = requested
        .or_else(|| {
            pod.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
        })
        .unwrap_or(DEFAULT_GRACE_SECONDS);
    let unscheduled = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    let finished = matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    );
    if grace <= 0 || unscheduled || finished {
        return Ok(None);
    }
    let current = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    if pod.pointer("/metadata/deletionTimestamp").is_some() && current.is_some_and(|c| c <= grace) {
        // Already terminating with a grace period at least this short.
        return Ok(Some(pod.clone()));
    }
    let mut pod = pod.clone();
    let rv = w.next_rv()?;
    let meta = &mut pod["metadata"];
    meta["deletionTimestamp"] = json!(crate::time::format_rfc3339(crate::time::now_secs() + grace));
    meta["deletionGracePeriodSeconds"] = json!(grace);
    meta["resourceVersion"] = json!(rv.to_string());
    w.put("/pods", ns, name, rv, pod.clone(), EventType::Modified)?;
    Ok(Some(pod))
}

/// Whether a pod is waiting for its kubelet to finish a graceful deletion.
pub fn awaiting_kubelet(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_some()
        && pod
            .pointer("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .is_some_and(|g| g > 0)
}
