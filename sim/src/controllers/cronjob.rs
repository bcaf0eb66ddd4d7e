//! The CronJob controller: a Job `<cronjob>-<scheduled time in minutes since the epoch>` (owned by
//! the CronJob, annotated with its scheduled time) for the latest scheduled time not yet run, unless
//! `suspend`, past `startingDeadlineSeconds`, or `concurrencyPolicy: Forbid` with a Job still
//! active (`Replace` deletes the active ones first); finished Jobs beyond
//! `successfulJobsHistoryLimit`/`failedJobsHistoryLimit` are deleted, oldest first. Status `active`,
//! `lastScheduleTime`, `lastSuccessfulTime`. Schedules are evaluated in UTC.
//!
//! Sim-only: the annotation `sim.piceli.dev/schedule-every: 2s` (`ms`, `s`, `m`, `h`; at least one
//! second) replaces the schedule with "every N seconds since the epoch", and Jobs are then named
//! `<cronjob>-<scheduled time in seconds since the epoch>`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::util::{self, s};
use piceli_core::cron::Schedule;

/// The CronJob annotation that replaces the schedule with a fixed interval (tests).
pub const SCHEDULE_EVERY_ANNOTATION: &str = "sim.piceli.dev/schedule-every";

const COMPONENT: &str = "cronjob-controller";

/// How a CronJob is scheduled.
enum Timing {
    Cron(Schedule),
    /// Every this many seconds.
    Every(i64),
}

impl Timing {
    fn of(cj: &Value) -> Option<Timing> {
        let every = cj
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(SCHEDULE_EVERY_ANNOTATION))
            .and_then(Value::as_str);
        if let Some(secs) = every.and_then(interval_secs) {
            return Some(Timing::Every(secs));
        }
        Schedule::parse(s(cj, "/spec/schedule"))
            .ok()
            .map(Timing::Cron)
    }

    fn latest_between(&self, after: i64, now: i64) -> Option<i64> {
        match self {
            Timing::Cron(c) => c.latest_between(after, now),
            Timing::Every(n) => Some(now.div_euclid(*n) * n).filter(|t| *t > after),
        }
    }

    fn next_after(&self, now: i64) -> Option<i64> {
        match self {
            Timing::Cron(c) => c.next_after(now),
            Timing::Every(n) => Some((now.div_euclid(*n) + 1) * n),
        }
    }

    fn job_name(&self, cj: &str, t: i64) -> String {
        match self {
            Timing::Cron(_) => format!("{cj}-{}", t / 60),
            Timing::Every(_) => format!("{cj}-{t}"),
        }
    }
}

/// `500ms`, `2s`, `1m`, `1h` → whole seconds (at least 1).
fn interval_secs(text: &str) -> Option<i64> {
    let t = text.trim();
    let (num, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        return None;
    };
    let ms = num.trim().parse::<i64>().ok()?.checked_mul(unit_ms)?;
    (ms > 0).then(|| ((ms + 999) / 1000).max(1))
}

fn finished(job: &Value) -> Option<&'static str> {
    let conds = job
        .pointer("/status/conditions")
        .and_then(Value::as_array)?;
    for kind in ["Complete", "Failed"] {
        if conds
            .iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
        {
            return Some(if kind == "Complete" {
                "Complete"
            } else {
                "Failed"
            });
        }
    }
    None
}

fn job_ref(job: &Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "name": s(job, "/metadata/name"),
           "namespace": s(job, "/metadata/namespace"), "uid": util::uid(job),
           "resourceVersion": s(job, "/metadata/resourceVersion")})
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &["batch/cronjobs", "batch/jobs"];

/// One turn over every CronJob.
pub fn reconcile(cluster: &Cluster, st: &mut State) {
    let (Ok(cjs), Ok(jobs)) = (
        cluster.rt("batch", "v1", "cronjobs"),
        cluster.rt("batch", "v1", "jobs"),
    ) else {
        return;
    };
    let all_jobs = cluster.list(&jobs);
    for cj in cluster.list(&cjs).iter() {
        if !util::terminating(cj) {
            one(cluster, st, &cjs, &jobs, cj, &all_jobs);
        }
    }
}

fn one(
    cluster: &Cluster,
    st: &mut State,
    cjs: &ResourceType,
    jobs: &ResourceType,
    cj: &Value,
    all: &[Arc<Value>],
) {
    let ns = s(cj, "/metadata/namespace");
    let name = s(cj, "/metadata/name");
    let mine: Vec<&Value> = all
        .iter()
        .map(|j| &**j)
        .filter(|j| util::controller_uid(j) == Some(util::uid(cj)) && !util::terminating(j))
        .collect();
    let old = cj.get("status").cloned().unwrap_or(json!({}));
    let mut status = old.clone();
    let listed = |v: &Value, uid: &str| {
        v.get("active")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|r| s(r, "/uid") == uid))
    };
    let mut active: Vec<Value> = Vec::new();
    let mut last_success = s(&old, "/lastSuccessfulTime").to_string();
    for job in &mine {
        match finished(job) {
            None => active.push(
                old.get("active")
                    .and_then(Value::as_array)
                    .and_then(|a| a.iter().find(|r| s(r, "/uid") == util::uid(job)).cloned())
                    .unwrap_or_else(|| job_ref(job)),
            ),
            Some(how) => {
                if listed(&old, util::uid(job)) {
                    let msg = format!(
                        "Saw completed job: {}, condition: {how}",
                        s(job, "/metadata/name")
                    );
                    cluster.event(cj, false, "SawCompletedJob", &msg, COMPONENT);
                }
                let done = s(job, "/status/completionTime");
                if how == "Complete" && done > last_success.as_str() {
                    last_success = done.to_string();
                }
            }
        }
    }
    let now_ms = crate::time::now_millis();
    let now = now_ms.div_euclid(1000);
    let timing = Timing::of(cj);
    let suspended = cj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    let earliest = crate::time::parse_rfc3339(s(cj, "/status/lastScheduleTime"))
        .or_else(|| crate::time::parse_rfc3339(s(cj, "/metadata/creationTimestamp")))
        .unwrap_or(now);
    if let (Some(timing), false) = (&timing, suspended) {
        let due = timing.latest_between(earliest, now);
        let deadline = cj
            .pointer("/spec/startingDeadlineSeconds")
            .and_then(Value::as_i64);
        if let Some(t) = due.filter(|t| deadline.is_none_or(|d| now - t <= d)) {
            let policy = s(cj, "/spec/concurrencyPolicy");
            if policy == "Forbid" && !active.is_empty() {
                // Not starting: the previous run is still active (retried when it ends).
            } else {
                if policy == "Replace" {
                    for r in active.drain(..) {
                        if cluster.remove(jobs, ns, s(&r, "/name")).is_ok() {
                            let msg = format!("Deleted job {}", s(&r, "/name"));
                            cluster.event(cj, false, "SuccessfulDelete", &msg, COMPONENT);
                        }
                    }
                }
                let job_name = timing.job_name(name, t);
                match cluster.create(jobs, ns, job_for(cj, &job_name, t), MANAGER) {
                    Ok(job) => {
                        cluster.event(
                            cj,
                            false,
                            "SuccessfulCreate",
                            &format!("Created job {job_name}"),
                            COMPONENT,
                        );
                        active.push(job_ref(&job));
                        status["lastScheduleTime"] = json!(crate::time::format_rfc3339(t));
                    }
                    Err(e) if e.code == 409 => {
                        status["lastScheduleTime"] = json!(crate::time::format_rfc3339(t));
                    }
                    Err(_) => {}
                }
            }
        }
        if let Some(next) = timing.next_after(now) {
            let wait = (next * 1000 - now_ms).max(0) as u64;
            st.wake_at(Instant::now() + Duration::from_millis(wait));
        }
    }
    clean_history(cluster, jobs, cj, &mine);
    active.sort_by(|a, b| s(a, "/name").cmp(s(b, "/name")));
    if active.is_empty() {
        if let Some(m) = status.as_object_mut() {
            m.remove("active");
        }
    } else {
        status["active"] = json!(active);
    }
    if !last_success.is_empty() {
        status["lastSuccessfulTime"] = json!(last_success);
    }
    if status != old {
        let _ = cluster.update(cjs, ns, name, "status", MANAGER, |x| {
            x["status"] = status;
            true
        });
    }
}

/// Deletes the oldest finished Jobs beyond the history limits.
fn clean_history(cluster: &Cluster, jobs: &ResourceType, cj: &Value, mine: &[&Value]) {
    let ns = s(cj, "/metadata/namespace");
    for (how, key, default) in [
        ("Complete", "/spec/successfulJobsHistoryLimit", 3),
        ("Failed", "/spec/failedJobsHistoryLimit", 1),
    ] {
        let limit = util::i(cj, key, default).max(0) as usize;
        let mut done: Vec<&&Value> = mine.iter().filter(|j| finished(j) == Some(how)).collect();
        if done.len() <= limit {
            continue;
        }
        done.sort_by(|a, b| {
            (
                s(a, "/status/startTime"),
                s(a, "/metadata/creationTimestamp"),
                s(a, "/metadata/name"),
            )
                .cmp(&(
                    s(b, "/status/startTime"),
                    s(b, "/metadata/creationTimestamp"),
                    s(b, "/metadata/name"),
                ))
        });
        for j in &done[..done.len() - limit] {
            let job = s(j, "/metadata/name");
            if cluster.remove(jobs, ns, job).is_ok() {
                cluster.event(
                    cj,
                    false,
                    "SuccessfulDelete",
                    &format!("Deleted job {job}"),
                    COMPONENT,
                );
            }
        }
    }
}

/// The Job a CronJob runs at `t`.
fn job_for(cj: &Value, name: &str, t: i64) -> Value {
    let tmpl = cj
        .pointer("/spec/jobTemplate")
        .cloned()
        .unwrap_or(json!({}));
    let mut meta = tmpl.get("metadata").cloned().unwrap_or(json!({}));
    if !meta.is_object() {
        meta = json!({});
    }
    meta["name"] = json!(name);
    meta["namespace"] = json!(s(cj, "/metadata/namespace"));
    meta["ownerReferences"] = json!([util::owner_ref(cj)]);
    if !meta.get("annotations").is_some_and(Value::is_object) {
        meta["annotations"] = json!({});
    }
    meta["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] =
        json!(crate::time::format_rfc3339(t));
    if let Some(m) = meta.as_object_mut() {
        m.remove("creationTimestamp");
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
           "spec": tmpl.get("spec").cloned().unwrap_or(json!({}))})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_and_names() {
        assert_eq!(interval_secs("2s"), Some(2));
        assert_eq!(interval_secs("500ms"), Some(1));
        assert_eq!(interval_secs("1m"), Some(60));
        assert_eq!(interval_secs("0s"), None);
        assert_eq!(interval_secs("soon"), None);
        let every = Timing::Every(2);
        assert_eq!(every.latest_between(100, 105), Some(104));
        assert_eq!(every.latest_between(104, 105), None);
        assert_eq!(every.next_after(105), Some(106));
        assert_eq!(every.job_name("tick", 104), "tick-104");
        let cron = Timing::Cron(Schedule::parse("* * * * *").unwrap());
        assert_eq!(cron.job_name("tick", 120), "tick-2");
    }
}
