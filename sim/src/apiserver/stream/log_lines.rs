//! What a simulated container has logged: lines derived from its status (started, ready or not,
//! crashed or exited — following the `sim.piceli.dev/behavior` annotation's effects), merged in time
//! order with the lines tests added (`RunningSim::append_log`), per container instance (restart
//! count): the current one, or with `previous` the one before.

use serde_json::Value;

use crate::status::ApiError;

/// One log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Nanoseconds since the Unix epoch.
    pub at: i128,
    /// Identifies the line across reads (followers send each line once).
    pub id: String,
    /// The line's text, without the newline.
    pub text: String,
}

/// The lines of a container instance, and whether that instance has ended.
pub struct Lines {
    /// The lines, oldest first.
    pub lines: Vec<Line>,
    /// Whether the container instance has ended (no more lines will come).
    pub ended: bool,
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn nanos(rfc3339: &str) -> Option<i128> {
    crate::time::parse_rfc3339(rfc3339).map(|s| s as i128 * 1_000_000_000)
}

/// The status of one container of a pod.
pub fn container_status<'a>(pod: &'a Value, container: &str) -> Option<&'a Value> {
    [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|k| {
        pod.pointer(&format!("/status/{k}"))
            .and_then(Value::as_array)
    })
    .flatten()
    .find(|s| s.get("name").and_then(Value::as_str) == Some(container))
}

/// The image of a container from the pod spec.
fn image(pod: &Value, container: &str) -> String {
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .filter_map(|k| pod.pointer(&format!("/spec/{k}")).and_then(Value::as_array))
        .flatten()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(container))
        .map(|c| str_at(c, "/image").to_string())
        .unwrap_or_default()
}

/// The lines of `container` in `pod` (current instance, or the previous one).
pub fn lines(
    hooks: &crate::hooks::Hooks,
    pod: &Value,
    container: &str,
    previous: bool,
) -> Result<Lines, ApiError> {
    let name = str_at(pod, "/metadata/name");
    let uid = str_at(pod, "/metadata/uid");
    let fallback = nanos(str_at(pod, "/status/startTime")).unwrap_or(0);
    let waiting = || {
        ApiError::bad_request(format!(
            "container {container:?} in pod {name:?} is waiting to start: ContainerCreating"
        ))
    };
    let st = container_status(pod, container).ok_or_else(waiting)?;
    let restarts = st.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
    let img = image(pod, container);
    let line = |at: i128, kind: &str, instance: i64, text: String| Line {
        at,
        id: format!("{instance}:{kind}"),
        text,
    };
    let started = |at: i128, instance: i64| {
        line(
            at,
            "started",
            instance,
            format!("[piceli-sim] container {container} started (image {img})"),
        )
    };
    let exited = |at: i128, instance: i64, code: i64, reason: &str| {
        line(
            at,
            "exited",
            instance,
            format!("[piceli-sim] container {container} exited with code {code} ({reason})"),
        )
    };
    let (instance, mut derived, ended) = if previous {
        if restarts == 0 {
            return Err(ApiError::bad_request(format!(
                "previous terminated container {container:?} in pod {name:?} not found"
            )));
        }
        let last = st.pointer("/lastState/terminated");
        let t0 = last
            .and_then(|t| nanos(str_at(t, "/startedAt")))
            .unwrap_or(fallback);
        let t1 = last
            .and_then(|t| nanos(str_at(t, "/finishedAt")))
            .unwrap_or(t0);
        let code = last
            .and_then(|t| t.get("exitCode"))
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let i = restarts - 1;
        (i, vec![started(t0, i), exited(t1, i, code, "Error")], true)
    } else if let Some(run) = st.pointer("/state/running") {
        let t = nanos(str_at(run, "/startedAt")).unwrap_or(fallback);
        let mut v = vec![started(t, restarts)];
        if st.get("ready").and_then(Value::as_bool) == Some(true) {
            v.push(line(
                t,
                "ready",
                restarts,
                format!("[piceli-sim] container {container} is ready"),
            ));
        } else if str_at(pod, &format!("/metadata/annotations/{}", behavior_key())) == "never-ready"
        {
            v.push(line(
                t,
                "not-ready",
                restarts,
                format!("[piceli-sim] container {container} is running but never gets ready (sim.piceli.dev/behavior=never-ready)"),
            ));
        }
        (restarts, v, false)
    } else if let Some(term) = st.pointer("/state/terminated") {
        let t0 = nanos(str_at(term, "/startedAt")).unwrap_or(fallback);
        let t1 = nanos(str_at(term, "/finishedAt")).unwrap_or(t0);
        let code = term.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
        let reason = str_at(term, "/reason");
        (
            restarts,
            vec![started(t0, restarts), exited(t1, restarts, code, reason)],
            true,
        )
    } else if str_at(st, "/state/waiting/reason") == "CrashLoopBackOff" {
        // The current instance is the one that crashed last.
        let t = st
            .pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str)
            .and_then(nanos)
            .unwrap_or(fallback);
        let mut v = vec![started(t, restarts)];
        v.push(line(
            t,
            "crashed",
            restarts,
            format!("[piceli-sim] container {container} crashed with exit code 1 (sim.piceli.dev/behavior=crash-loop)"),
        ));
        (restarts, v, true)
    } else {
        return Err(waiting());
    };
    for added in hooks.logs.lines(uid, container, instance) {
        derived.push(Line {
            at: added.at,
            id: format!("{instance}:added:{}", added.seq),
            text: added.text,
        });
    }
    // Derived lines first among equal times (stable sort).
    derived.sort_by_key(|l| l.at);
    Ok(Lines {
        lines: derived,
        ended,
    })
}

fn behavior_key() -> String {
    crate::kubelet::pod::BEHAVIOR_ANNOTATION.replace('/', "~1")
}

/// `2026-01-02T03:04:05.123456789Z`, trailing zeros of the fraction dropped (Go's RFC3339Nano).
pub fn format_nanos(at: i128) -> String {
    let secs = at.div_euclid(1_000_000_000) as i64;
    let frac = at.rem_euclid(1_000_000_000);
    let base = crate::time::format_rfc3339(secs);
    if frac == 0 {
        return base;
    }
    let digits = format!("{frac:09}");
    let digits = digits.trim_end_matches('0');
    format!("{}.{digits}Z", base.trim_end_matches('Z'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_look_like_rfc3339_nano() {
        assert_eq!(format_nanos(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_nanos(1_500_000_000), "1970-01-01T00:00:01.5Z");
        assert_eq!(
            format_nanos(1_000_000_123),
            "1970-01-01T00:00:01.000000123Z"
        );
    }
}
