//! The Job controller: runs up to `parallelism` pods until `completions` succeeded (conditions
//! `SuccessCriteriaMet` and `Complete`) or more than `backoffLimit` failed (`FailureTarget` and
//! `Failed`, reason `BackoffLimitExceeded`); status active/ready/succeeded/failed, startTime and
//! completionTime.

use serde_json::{Value, json};

use super::replicaset::ready;
use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::util::{self, s};

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &["batch/jobs", "/pods"];

/// One turn over every Job.
pub fn reconcile(cluster: &Cluster, _st: &mut State) {
    let (Ok(jobs), Ok(pods)) = (
        cluster.rt("batch", "v1", "jobs"),
        cluster.rt("", "v1", "pods"),
    ) else {
        return;
    };
    let all_pods = cluster.list(&pods);
    let pods_of = util::by_controller(&all_pods, |p| !util::terminating(p));
    for job in cluster.list(&jobs).iter() {
        if util::terminating(job) {
            continue;
        }
        let ns = s(job, "/metadata/namespace");
        let name = s(job, "/metadata/name");
        let mine: Vec<&Value> = pods_of.get(util::uid(job)).cloned().unwrap_or_default();
        let phase = |p: &&Value| s(p, "/status/phase").to_string();
        let succeeded = mine.iter().filter(|p| phase(p) == "Succeeded").count() as i64;
        let failed = mine.iter().filter(|p| phase(p) == "Failed").count() as i64;
        let active: Vec<&&Value> = mine
            .iter()
            .filter(|p| !matches!(phase(p).as_str(), "Succeeded" | "Failed"))
            .collect();
        let finished = job
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|c| {
                c.iter().any(|c| {
                    (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True"
                })
            });
        let parallelism = util::i(job, "/spec/parallelism", 1).max(0);
        let completions = job.pointer("/spec/completions").and_then(Value::as_i64);
        let backoff = util::i(job, "/spec/backoffLimit", 6);
        let suspended = job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
        let done = match completions {
            Some(c) => succeeded >= c,
            None => succeeded > 0 && active.is_empty(),
        };
        let failed_out = failed > backoff;
        if !finished && !done && !failed_out && !suspended {
            let remaining = completions.map_or(parallelism, |c| (c - succeeded).min(parallelism));
            let missing = remaining - active.len() as i64;
            let mut wrote = false;
            for _ in 0..missing.max(0) {
                if let Ok(p) = cluster.create(&pods, ns, pod_for(job), MANAGER) {
                    wrote = true;
                    cluster.event(
                        job,
                        false,
                        "SuccessfulCreate",
                        &format!("Created pod: {}", s(&p, "/metadata/name")),
                        "job-controller",
                    );
                }
            }
            if wrote {
                continue;
            }
        }
        if (failed_out || suspended) && !finished {
            for p in &active {
                let _ = cluster.remove(&pods, ns, s(p, "/metadata/name"));
            }
        }
        let now = crate::time::now_rfc3339();
        let old = job.get("status").cloned().unwrap_or(json!({}));
        let mut status = old.clone();
        if status.get("startTime").is_none() && !suspended {
            status["startTime"] = json!(now);
        }
        let set = |st: &mut Value, k: &str, v: i64| {
            if v > 0 {
                st[k] = json!(v);
            } else if let Some(m) = st.as_object_mut() {
                m.remove(k);
            }
        };
        if !finished {
            set(
                &mut status,
                "active",
                if failed_out { 0 } else { active.len() as i64 },
            );
            set(&mut status, "succeeded", succeeded);
            set(&mut status, "failed", failed);
            status["ready"] = json!(active.iter().filter(|p| ready(p)).count());
            status["terminating"] = json!(0);
            status["uncountedTerminatedPods"] = json!({});
            let cond = |t: &str, reason: &str, msg: &str| {
                json!({"type": t, "status": "True", "reason": reason, "message": msg,
                       "lastProbeTime": now, "lastTransitionTime": now})
            };
            if done {
                status["conditions"] = json!([
                    cond(
                        "SuccessCriteriaMet",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods"
                    ),
                    cond(
                        "Complete",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods"
                    ),
                ]);
                status["completionTime"] = json!(now);
                cluster.event(job, false, "Completed", "Job completed", "job-controller");
                set(&mut status, "active", 0);
                status["ready"] = json!(0);
            } else if failed_out {
                status["conditions"] = json!([
                    cond(
                        "FailureTarget",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit"
                    ),
                    cond(
                        "Failed",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit"
                    ),
                ]);
                status["ready"] = json!(0);
                cluster.event(
                    job,
                    true,
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    "job-controller",
                );
            } else {
                suspension(&mut status, suspended, &now);
            }
        }
        if status == old {
            continue;
        }
        let _ = cluster.update(&jobs, ns, name, "status", MANAGER, |x| {
            x["status"] = status;
            true
        });
    }
}

/// The `Suspended` condition as the job controller keeps it: True (`JobSuspended`) while
/// `spec.suspend` holds, False (`JobResumed`) once a suspended Job is resumed.
fn suspension(status: &mut Value, suspended: bool, now: &str) {
    let mut conditions: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let at = conditions.iter().position(|c| c["type"] == "Suspended");
    let (want, reason, message) = if suspended {
        ("True", "JobSuspended", "Job suspended")
    } else {
        ("False", "JobResumed", "Job resumed")
    };
    match at {
        Some(i) if conditions[i]["status"] == want => return,
        None if !suspended => return,
        _ => {}
    }
    let cond = json!({"type": "Suspended", "status": want, "reason": reason, "message": message,
        "lastProbeTime": now, "lastTransitionTime": now});
    match at {
        Some(i) => conditions[i] = cond,
        None => conditions.push(cond),
    }
    status["conditions"] = json!(conditions);
}

fn pod_for(job: &Value) -> Value {
    let name = s(job, "/metadata/name");
    let tmpl = super::template::pod_template(job);
    let mut meta = tmpl.get("metadata").cloned().unwrap_or(json!({}));
    let suffix = &crate::registry::object::new_uid()[..5];
    meta["name"] = json!(format!("{name}-{suffix}"));
    meta["generateName"] = json!(format!("{name}-"));
    meta["namespace"] = json!(s(job, "/metadata/namespace"));
    meta["ownerReferences"] = json!([util::owner_ref(job)]);
    if let Some(m) = meta.as_object_mut() {
        m.remove("creationTimestamp");
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": tmpl.get("spec").cloned().unwrap_or(json!({}))})
}
