//! Simulated scheduler and kubelet: every pod is bound to the simulated node, then after
//! `pod_ready_delay` gets a podIP, phase Running, container statuses and Ready=True — unless its
//! `sim.piceli.dev/behavior` annotation asks for a failure:
//!
//! - `crash-loop`: containers keep crashing (restartCount grows every `crash_restart_interval`,
//!   waiting reason `CrashLoopBackOff`), Ready=False;
//! - `never-ready`: Running but never Ready;
//! - `fail`: phase Failed (exit code 1) for pods with restartPolicy Never/OnFailure; a crash loop
//!   for restartPolicy Always (as a real kubelet restarts such containers).
//!
//! Healthy pods with restartPolicy Never/OnFailure (Job pods) run for `pod_run_duration`, then
//! succeed (phase Succeeded, exit code 0).

use std::time::Instant;

use serde_json::{Value, json};

use super::{Memory, NODE_IP, NODE_NAME, Timing};
use crate::cluster::Cluster;
use crate::util::{self, s};

/// The pod (template) annotation that selects a simulated failure.
pub const BEHAVIOR_ANNOTATION: &str = "sim.piceli.dev/behavior";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behavior {
    Healthy,
    CrashLoop,
    NeverReady,
    Fail,
    /// Exited 0 (a healthy pod with restartPolicy Never/OnFailure after `pod_run_duration`).
    Complete,
}

fn behavior(pod: &Value) -> Behavior {
    let restart_always = matches!(s(pod, "/spec/restartPolicy"), "" | "Always");
    match pod
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(BEHAVIOR_ANNOTATION))
        .and_then(Value::as_str)
    {
        Some("crash-loop") => Behavior::CrashLoop,
        Some("never-ready") => Behavior::NeverReady,
        Some("fail") if restart_always => Behavior::CrashLoop,
        Some("fail") => Behavior::Fail,
        _ => Behavior::Healthy,
    }
}

/// A stable fake IP for a pod in 10.244.0.0/16.
fn pod_ip(uid: &str, probe: u32) -> String {
    let n = (fnv(uid).wrapping_add(probe)) % (256 * 253);
    format!("10.244.{}.{}", n / 253, (n % 253) + 2)
}

/// An IP for a new pod that no other pod has (the uid's hash, then the next free one).
fn free_ip(uid: &str, used: &std::collections::HashSet<String>) -> String {
    (0..256 * 253)
        .map(|p| pod_ip(uid, p))
        .find(|ip| !used.contains(ip))
        .unwrap_or_else(|| pod_ip(uid, 0))
}

fn containers(pod: &Value, key: &str) -> Vec<Value> {
    pod.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn condition(t: &str, ok: bool, now: &str, reason: Option<&str>) -> Value {
    let mut c = json!({"type": t, "status": if ok { "True" } else { "False" },
                       "lastProbeTime": null, "lastTransitionTime": now});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    c
}

/// The status a kubelet would report for `pod` with `restarts` restarts so far; `probed` is what
/// its http readiness probes say, if it has mapped ones ([`super::probe`]).
fn status(pod: &Value, b: Behavior, restarts: i64, started: &str, probed: Option<bool>) -> Value {
    let now = crate::time::now_rfc3339();
    let uid = util::uid(pod);
    let ready = b == Behavior::Healthy && probed != Some(false);
    let ip = match s(pod, "/status/podIP") {
        "" => pod_ip(uid, 0),
        have => have.to_string(),
    };
    let statuses: Vec<Value> = containers(pod, "containers")
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let id = format!("containerd://{:0>16x}{n:0>4}", fnv(uid));
            let mut st = json!({
                "name": c.get("name").cloned().unwrap_or(Value::Null),
                "image": c.get("image").cloned().unwrap_or(Value::Null),
                "imageID": format!("{}@sha256:{:0>64x}", s(c, "/image"), fnv(s(c, "/image"))),
                "containerID": id,
                "ready": ready,
                "restartCount": restarts,
                "started": b == Behavior::Healthy || b == Behavior::NeverReady,
            });
            st["state"] = match b {
                Behavior::Healthy | Behavior::NeverReady => json!({"running": {"startedAt": started}}),
                Behavior::CrashLoop => json!({"waiting": {"reason": "CrashLoopBackOff",
                    "message": format!("back-off restarting failed container {} in pod {}", s(c, "/name"), s(pod, "/metadata/name"))}}),
                Behavior::Fail => json!({"terminated": {"exitCode": 1, "reason": "Error",
                    "startedAt": started, "finishedAt": now, "containerID": st["containerID"]}}),
                Behavior::Complete => json!({"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": started, "finishedAt": now, "containerID": st["containerID"]}}),
            };
            if b == Behavior::CrashLoop && restarts > 0 {
                st["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
                    "startedAt": started, "finishedAt": now, "containerID": st["containerID"]}});
            }
            st
        })
        .collect();
    let not_ready = match b {
        Behavior::Healthy if ready => None,
        Behavior::Complete | Behavior::Fail => Some("PodCompleted"),
        _ => Some("ContainersNotReady"),
    };
    let phase = match b {
        Behavior::Fail => "Failed",
        Behavior::Complete => "Succeeded",
        _ => "Running",
    };
    json!({
        "phase": phase,
        "conditions": [
            condition(
                "PodReadyToStartContainers",
                !matches!(b, Behavior::Fail | Behavior::Complete),
                started,
                None
            ),
            condition("Initialized", true, started, None),
            condition("Ready", ready, started, not_ready),
            condition("ContainersReady", ready, started, not_ready),
            condition("PodScheduled", true, started, None),
        ],
        "hostIP": NODE_IP,
        "hostIPs": [{"ip": NODE_IP}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": started,
        "qosClass": "BestEffort",
        "containerStatuses": statuses,
    })
}

fn fnv(text: &str) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for b in text.bytes() {
        h = (h ^ b as u32).wrapping_mul(16_777_619);
    }
    h
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(crate) const WATCHES: &[&str] = &["/pods"];

/// One turn over every pod.
pub fn reconcile(cluster: &Cluster, config: &Timing, st: &mut Memory) {
    let Ok(pods) = cluster.rt("", "v1", "pods") else {
        return;
    };
    let all = cluster.list(&pods);
    let now = Instant::now();
    let live: std::collections::HashSet<&str> = all.iter().map(|p| util::uid(p)).collect();
    st.scheduled_at.retain(|k, _| live.contains(k.as_str()));
    st.last_restart.retain(|k, _| live.contains(k.as_str()));
    st.settled.retain(|k, _| live.contains(k.as_str()));
    st.probes.retain(&live);
    st.pulls.retain(&live);
    cluster.hooks().logs.retain_pods(&live);
    let mut used_ips: std::collections::HashSet<String> = all
        .iter()
        .map(|p| s(p, "/status/podIP").to_string())
        .filter(|ip| !ip.is_empty())
        .collect();
    for pod in all.iter() {
        if util::terminating(pod) {
            continue;
        }
        let ns = s(pod, "/metadata/namespace");
        let name = s(pod, "/metadata/name");
        let uid = util::uid(pod).to_string();
        if s(pod, "/spec/nodeName").is_empty() {
            let bound = cluster.update(&pods, ns, name, "", "kube-scheduler", |p| {
                p["spec"]["nodeName"] = json!(NODE_NAME);
                true
            });
            if bound.is_ok() {
                cluster.event(
                    pod,
                    false,
                    "Scheduled",
                    &format!("Successfully assigned {ns}/{name} to {NODE_NAME}"),
                    "default-scheduler",
                );
            }
            continue;
        }
        let seen = *st.scheduled_at.entry(uid.clone()).or_insert(now);
        let b = behavior(pod);
        let phase = s(pod, "/status/phase");
        if phase.is_empty() || phase == "Pending" {
            let due = seen + config.pod_ready_delay;
            if now < due {
                st.wake_at(due);
                continue;
            }
            if let Some(failure) = st.pulls.check(pod, &uid, now) {
                crate::kubelet::image_pull::report(cluster, &pods, pod, &failure);
                st.wake_at(now + crate::kubelet::image_pull::RETRY);
                continue;
            }
            let started = crate::time::now_rfc3339();
            let probed = st
                .probes
                .readiness(cluster, pod, &uid, probe_period(config), now);
            if probed.is_some() {
                st.wake_at(now + probe_period(config));
            }
            let mut new = status(pod, b, 0, &started, probed);
            let host_network =
                pod.pointer("/spec/hostNetwork").and_then(Value::as_bool) == Some(true);
            let ip = if host_network {
                NODE_IP.to_string()
            } else {
                free_ip(&uid, &used_ips)
            };
            used_ips.insert(ip.clone());
            new["podIP"] = json!(ip);
            new["podIPs"] = json!([{"ip": ip}]);
            let wrote = cluster.update(&pods, ns, name, "status", "kubelet", |p| {
                p["status"] = new;
                true
            });
            if wrote.is_ok() {
                for c in containers(pod, "containers") {
                    cluster.event(
                        pod,
                        false,
                        "Started",
                        &format!("Started container {}", s(&c, "/name")),
                        "kubelet",
                    );
                }
            }
            st.last_restart.insert(uid, now);
            continue;
        }
        if phase != "Running" {
            continue;
        }
        let runs_to_end = !matches!(s(pod, "/spec/restartPolicy"), "" | "Always");
        if b == Behavior::Healthy && runs_to_end {
            let since = *st.last_restart.entry(uid.clone()).or_insert(now);
            let due = since + config.pod_run_duration;
            if now < due {
                st.wake_at(due);
                continue;
            }
            let started = s(pod, "/status/startTime").to_string();
            let done = status(pod, Behavior::Complete, 0, &started, None);
            let _ = cluster.update(&pods, ns, name, "status", "kubelet", |p| {
                p["status"] = done;
                true
            });
            continue;
        }
        // A pod found in line at this resourceVersion (and these port mappings) stays so until one
        // of them changes: its status is not rebuilt every turn.
        let seen_as = (
            s(pod, "/metadata/resourceVersion").to_string(),
            cluster.hooks().port_changes(),
        );
        if st.settled.get(&uid) == Some(&seen_as) {
            continue;
        }
        // Keep the status in line with the behaviour (an annotation may change on a live pod) and
        // let crash loops restart.
        let restarts = util::i(pod, "/status/containerStatuses/0/restartCount", 0);
        let started = s(pod, "/status/startTime").to_string();
        let probed = if b == Behavior::Healthy {
            st.probes
                .readiness(cluster, pod, &uid, probe_period(config), now)
        } else {
            None
        };
        if probed.is_some() {
            st.wake_at(now + probe_period(config));
        }
        let mut want = status(pod, b, restarts, &started, probed);
        if b == Behavior::CrashLoop {
            let last = *st.last_restart.entry(uid.clone()).or_insert(now);
            let due = last + config.crash_restart_interval;
            if now >= due {
                want = status(pod, b, restarts + 1, &started, None);
                if restarts == 0 {
                    for c in containers(pod, "containers") {
                        cluster.event(
                            pod,
                            true,
                            "BackOff",
                            &format!(
                                "Back-off restarting failed container {} in pod {name}",
                                s(&c, "/name")
                            ),
                            "kubelet",
                        );
                    }
                }
                st.last_restart.insert(uid, now);
                st.wake_at(now + config.crash_restart_interval);
            } else {
                st.wake_at(due);
                if same_shape(pod, &want) {
                    continue;
                }
            }
        } else if same_shape(pod, &want) {
            if probed.is_none() {
                st.settled.insert(uid, seen_as);
            }
            continue;
        }
        let _ = cluster.update(&pods, ns, name, "status", "kubelet", |p| {
            // Conditions keep their transition times when their status stays the same.
            if let (Some(old), Some(new)) = (
                p.pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .cloned(),
                want.get_mut("conditions").and_then(Value::as_array_mut),
            ) {
                for c in new.iter_mut() {
                    if let Some(o) = old
                        .iter()
                        .find(|o| o["type"] == c["type"] && o["status"] == c["status"])
                    {
                        c["lastTransitionTime"] = o["lastTransitionTime"].clone();
                    }
                }
            }
            p["status"] = want;
            true
        });
    }
}

/// How often pods with mapped http readiness probes are probed.
fn probe_period(config: &Timing) -> std::time::Duration {
    config
        .pod_ready_delay
        .max(crate::kubelet::probe::MIN_PERIOD)
}

/// Whether the pod's status already has the phase, readiness and container states `want` has.
fn same_shape(pod: &Value, want: &Value) -> bool {
    let have = pod.get("status").cloned().unwrap_or(Value::Null);
    let ready = |v: &Value| -> Vec<(Value, Value)> {
        v.get("conditions")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .map(|c| (c["type"].clone(), c["status"].clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let states = |v: &Value| -> Vec<(Value, Value, bool)> {
        v.get("containerStatuses")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .map(|c| {
                        let kind = c
                            .get("state")
                            .and_then(Value::as_object)
                            .and_then(|m| m.keys().next().cloned())
                            .unwrap_or_default();
                        (json!(kind), c["restartCount"].clone(), c["ready"] == true)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    have["phase"] == want["phase"] && ready(&have) == ready(want) && states(&have) == states(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaviours_come_from_the_annotation() {
        let pod = |b: &str, policy: &str| json!({"metadata": {"annotations": {BEHAVIOR_ANNOTATION: b}}, "spec": {"restartPolicy": policy}});
        assert_eq!(behavior(&pod("crash-loop", "Always")), Behavior::CrashLoop);
        assert_eq!(
            behavior(&pod("never-ready", "Always")),
            Behavior::NeverReady
        );
        assert_eq!(behavior(&pod("fail", "Always")), Behavior::CrashLoop);
        assert_eq!(behavior(&pod("fail", "Never")), Behavior::Fail);
        assert_eq!(behavior(&json!({})), Behavior::Healthy);
    }

    #[test]
    fn pod_ips_are_not_reused() {
        let mut used = std::collections::HashSet::new();
        used.insert(pod_ip("u", 0));
        let ip = free_ip("u", &used);
        assert_ne!(ip, pod_ip("u", 0));
        assert!(ip.starts_with("10.244."));
    }

    #[test]
    fn crash_loops_report_back_off() {
        let pod = json!({"metadata": {"name": "p", "uid": "u"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let st = status(&pod, Behavior::CrashLoop, 3, "2026-01-01T00:00:00Z", None);
        assert_eq!(st["containerStatuses"][0]["restartCount"], 3);
        assert_eq!(
            st["containerStatuses"][0]["state"]["waiting"]["reason"],
            "CrashLoopBackOff"
        );
        assert_eq!(st["conditions"][2]["status"], "False");
        let ok = status(&pod, Behavior::Healthy, 0, "2026-01-01T00:00:00Z", None);
        assert_eq!(ok["conditions"][2]["status"], "True");
        assert!(same_shape(&json!({"status": ok}), &ok));
    }
}
