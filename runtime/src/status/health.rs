//! One workload's health from its live object and its pods: ready, progressing, unavailable or missing,
//! with replica counts and the likeliest reason (a rollout past its deadline, a crash-looping or
//! never-ready pod).

use crate::engine::ready::{Readiness, readiness};
use serde::Serialize;
use serde_json::Value;

/// A workload's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Rolled out and every desired pod ready (a Job: complete).
    Ready,
    /// Some pods ready, not all (a rollout under way or stuck); a Job still running.
    Progressing,
    /// Pods are wanted and none is ready; a failed Job.
    Unavailable,
    /// The object does not exist in the cluster.
    Missing,
}

impl Health {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Ready => "ready",
            Health::Progressing => "progressing",
            Health::Unavailable => "unavailable",
            Health::Missing => "missing",
        }
    }
}

/// One workload's health as `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadHealth {
    /// `Deployment`, `StatefulSet`, `DaemonSet`, `Job` or `CronJob`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its health.
    pub health: Health,
    /// Ready pods (a Job: succeeded pods).
    pub ready: i64,
    /// Desired pods (a Job: completions).
    pub desired: i64,
    /// Why it is not ready, when known.
    pub reason: Option<String>,
}

fn int(v: &Value, path: &str) -> Option<i64> {
    v.pointer(path).and_then(Value::as_i64)
}

/// The counts `(ready, desired)` a kind's status reports.
fn counts(kind: &str, o: &Value) -> (i64, i64) {
    match kind {
        "DaemonSet" => (
            int(o, "/status/numberReady").unwrap_or(0),
            int(o, "/status/desiredNumberScheduled").unwrap_or(0),
        ),
        "Job" => (
            int(o, "/status/succeeded").unwrap_or(0),
            int(o, "/spec/completions").unwrap_or(1),
        ),
        "CronJob" => (0, 0),
        _ => (
            int(o, "/status/readyReplicas").unwrap_or(0),
            int(o, "/spec/replicas").unwrap_or(1),
        ),
    }
}

/// The health of a workload of `kind` called `name`, from its live object (`None`: missing) and its pods.
pub fn workload_health(
    kind: &str,
    name: &str,
    object: Option<&Value>,
    pods: &[Value],
) -> WorkloadHealth {
    let base = |health, ready, desired, reason| WorkloadHealth {
        kind: kind.to_string(),
        name: name.to_string(),
        health,
        ready,
        desired,
        reason,
    };
    let Some(o) = object else {
        return base(
            Health::Missing,
            0,
            0,
            Some(format!("{kind} {name} does not exist in the cluster")),
        );
    };
    let (ready, desired) = counts(kind, o);
    if kind == "CronJob" {
        let active = o
            .pointer("/status/active")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        return base(
            Health::Ready,
            0,
            0,
            (active > 0).then(|| format!("{active} job(s) running")),
        );
    }
    let pod_reason = pod_reason(pods);
    match readiness(o) {
        Readiness::Ready => base(Health::Ready, ready, desired, None),
        Readiness::Failed(why) => {
            let health = if kind != "Job" && ready > 0 {
                Health::Progressing
            } else {
                Health::Unavailable
            };
            let reason = match pod_reason {
                Some(p) => format!("{why}; {p}"),
                None => why,
            };
            base(health, ready, desired, Some(reason))
        }
        Readiness::Waiting(why) => {
            let health = if kind != "Job" && desired > 0 && ready == 0 {
                Health::Unavailable
            } else {
                Health::Progressing
            };
            base(health, ready, desired, Some(pod_reason.unwrap_or(why)))
        }
    }
}

/// The first troubled pod (by name), described: a waiting container's reason and restarts, a running pod
/// that is not ready, a failed or pending pod.
pub fn pod_reason(pods: &[Value]) -> Option<String> {
    let mut sorted: Vec<&Value> = pods.iter().collect();
    sorted.sort_by_key(|p| p.pointer("/metadata/name").and_then(Value::as_str));
    sorted.into_iter().find_map(one_pod_reason)
}

fn one_pod_reason(pod: &Value) -> Option<String> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        return None;
    }
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array);
    for c in statuses.into_iter().flatten() {
        if let Some(reason) = c.pointer("/state/waiting/reason").and_then(Value::as_str) {
            let restarts = c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
            return Some(format!("pod {name}: {reason} ({restarts} restarts)"));
        }
    }
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("Pending");
    let ready = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
    match phase {
        "Running" if !ready => Some(format!("pod {name} is running but not ready")),
        "Failed" => Some(format!("pod {name} failed")),
        "Pending" => Some(format!("pod {name} is pending")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(ready: i64, available: i64, conditions: Value) -> Value {
        json!({"kind": "Deployment", "metadata": {"generation": 1},
               "spec": {"replicas": 2},
               "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                          "readyReplicas": ready, "availableReplicas": available,
                          "conditions": conditions}})
    }

    fn pod(name: &str, status: Value) -> Value {
        json!({"metadata": {"name": name}, "status": status})
    }

    #[test]
    fn missing_and_ready() {
        let h = workload_health("Deployment", "web", None, &[]);
        assert_eq!(h.health, Health::Missing);
        let h = workload_health("Deployment", "web", Some(&deployment(2, 2, json!([]))), &[]);
        assert_eq!(
            (h.health, h.ready, h.desired, h.reason),
            (Health::Ready, 2, 2, None)
        );
    }

    #[test]
    fn crash_looping_pods_make_it_unavailable_with_the_reason() {
        let crashing = pod(
            "web-abc",
            json!({"phase": "Running", "containerStatuses": [
                {"restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
        );
        let h = workload_health(
            "Deployment",
            "web",
            Some(&deployment(0, 0, json!([]))),
            &[crashing],
        );
        assert_eq!(h.health, Health::Unavailable);
        assert_eq!(
            h.reason.as_deref(),
            Some("pod web-abc: CrashLoopBackOff (4 restarts)")
        );
    }

    #[test]
    fn partly_ready_is_progressing_and_a_deadline_is_named() {
        let never = pod(
            "web-new",
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}),
        );
        let h = workload_health(
            "Deployment",
            "web",
            Some(&deployment(1, 1, json!([]))),
            std::slice::from_ref(&never),
        );
        assert_eq!(h.health, Health::Progressing);
        assert_eq!(
            h.reason.as_deref(),
            Some("pod web-new is running but not ready")
        );
        let stuck = json!([{"type": "Progressing", "status": "False",
                            "reason": "ProgressDeadlineExceeded", "message": "too slow"}]);
        let h = workload_health(
            "Deployment",
            "web",
            Some(&deployment(0, 0, stuck)),
            &[never],
        );
        assert_eq!(h.health, Health::Unavailable);
        let reason = h.reason.unwrap_or_default();
        assert!(
            reason.contains("progress deadline") && reason.contains("too slow"),
            "{reason}"
        );
    }

    #[test]
    fn jobs_daemonsets_and_cronjobs() {
        let job = |c: &str| {
            json!({"kind": "Job", "spec": {"completions": 1},
            "status": {"succeeded": i64::from(c == "Complete"), "conditions": [{"type": c, "status": "True"}]}})
        };
        assert_eq!(
            workload_health("Job", "m", Some(&job("Complete")), &[]).health,
            Health::Ready
        );
        assert_eq!(
            workload_health("Job", "m", Some(&job("Failed")), &[]).health,
            Health::Unavailable
        );
        let ds = json!({"kind": "DaemonSet", "metadata": {"generation": 1}, "status": {
            "observedGeneration": 1, "desiredNumberScheduled": 3, "numberReady": 1, "updatedNumberScheduled": 3}});
        let h = workload_health("DaemonSet", "agent", Some(&ds), &[]);
        assert_eq!((h.health, h.ready, h.desired), (Health::Progressing, 1, 3));
        let cron = json!({"kind": "CronJob", "status": {}});
        assert_eq!(
            workload_health("CronJob", "nightly", Some(&cron), &[]).health,
            Health::Ready
        );
    }
}
