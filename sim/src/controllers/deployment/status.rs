//! The Deployment status the controller writes: replica counts, observedGeneration and the
//! `Available` and `Progressing` conditions (including `ProgressDeadlineExceeded`), with the
//! conditions' transition times kept as the real controller keeps them.

use serde_json::{Value, json};

use super::{find_new, scaled};
use crate::cluster::Cluster;
use crate::controllers::template::template_hash;
use crate::controllers::{MANAGER, State};
use crate::registry::ResourceType;
use crate::util::{self, s};

fn cond<'a>(status: &'a Value, t: &str) -> Option<&'a Value> {
    status
        .get("conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == t)
}

/// Sets a condition: unchanged when status and reason are the same (unless `touch`); the transition
/// time survives when only the reason changes.
fn set_cond(status: &mut Value, t: &str, ok: bool, reason: &str, msg: &str, touch: bool) {
    let st = if ok { "True" } else { "False" };
    set_cond_status(status, t, st, reason, msg, touch);
}

/// [`set_cond`] with any status (`Unknown` for paused Deployments).
fn set_cond_status(status: &mut Value, t: &str, st: &str, reason: &str, msg: &str, touch: bool) {
    let now = crate::time::now_rfc3339();
    let old = cond(status, t).cloned();
    if let Some(o) = &old
        && o["status"] == st
        && o["reason"] == reason
        && !touch
    {
        return;
    }
    let transition = match &old {
        Some(o) if o["status"] == st => o["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    let c = json!({"type": t, "status": st, "lastUpdateTime": now, "lastTransitionTime": transition,
                   "reason": reason, "message": msg});
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        match list.iter_mut().find(|x| x["type"] == t) {
            Some(x) => *x = c,
            None => list.push(c),
        }
    }
}

pub(super) fn write_status(
    cluster: &Cluster,
    deps: &ResourceType,
    d: &Value,
    owned: &[&Value],
    st: &mut State,
) {
    let template = d.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let new_name = format!(
        "{}-{}",
        s(d, "/metadata/name"),
        template_hash(&template, util::i(d, "/status/collisionCount", 0))
    );
    let new_rs = find_new(owned, &template, &new_name);
    let sum = |p: &str| -> i64 { owned.iter().map(|r| util::i(r, p, 0)).sum() };
    let want = util::i(d, "/spec/replicas", 1).max(0);
    let replicas = sum("/status/replicas");
    let updated = new_rs
        .map(|r| util::i(r, "/status/replicas", 0))
        .unwrap_or(0);
    let ready = sum("/status/readyReplicas");
    let available = sum("/status/availableReplicas");
    let old = d.get("status").cloned().unwrap_or(json!({}));
    let mut status = old.clone();
    let set = |status: &mut Value, k: &str, v: i64, keep_zero: bool| {
        if v != 0 || keep_zero {
            status[k] = json!(v);
        } else if let Some(m) = status.as_object_mut() {
            m.remove(k);
        }
    };
    status["observedGeneration"] = json!(util::i(d, "/metadata/generation", 1));
    set(&mut status, "replicas", replicas, false);
    set(&mut status, "updatedReplicas", updated, false);
    set(&mut status, "readyReplicas", ready, false);
    set(&mut status, "availableReplicas", available, false);
    set(
        &mut status,
        "unavailableReplicas",
        (owned
            .iter()
            .map(|r| util::i(r, "/spec/replicas", 0))
            .sum::<i64>()
            - available)
            .max(0),
        false,
    );

    let rolling = s(d, "/spec/strategy/type") != "Recreate";
    let mut unavail = if rolling && want > 0 {
        scaled(
            d.pointer("/spec/strategy/rollingUpdate/maxUnavailable"),
            want,
            "25%",
            false,
        )
    } else {
        0
    };
    if rolling && want > 0 && unavail == 0 {
        let surge = scaled(
            d.pointer("/spec/strategy/rollingUpdate/maxSurge"),
            want,
            "25%",
            true,
        );
        if surge == 0 {
            unavail = 1;
        }
    }
    if available >= want - unavail.min(want) {
        set_cond(
            &mut status,
            "Available",
            true,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            false,
        );
    } else {
        set_cond(
            &mut status,
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            false,
        );
    }

    let paused = d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);
    let rs_name = new_rs.map(|r| s(r, "/metadata/name")).unwrap_or("");
    let deadline = d
        .pointer("/spec/progressDeadlineSeconds")
        .and_then(Value::as_i64);
    let was_paused = cond(&old, "Progressing").is_some_and(|c| c["reason"] == "DeploymentPaused");
    if paused {
        set_cond_status(
            &mut status,
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
            false,
        );
    } else if was_paused {
        set_cond_status(
            &mut status,
            "Progressing",
            "Unknown",
            "DeploymentResumed",
            "Deployment is resumed",
            false,
        );
    } else if deadline.is_some() {
        let complete = new_rs.is_some() && updated == want && replicas == want && available == want;
        let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
        let progressed = n(&status, "updatedReplicas") > n(&old, "updatedReplicas")
            || n(&status, "readyReplicas") > n(&old, "readyReplicas")
            || n(&status, "availableReplicas") > n(&old, "availableReplicas")
            || (n(&status, "replicas") - n(&status, "updatedReplicas"))
                < (n(&old, "replicas") - n(&old, "updatedReplicas"));
        let current = cond(&old, "Progressing").cloned();
        let reason = current
            .as_ref()
            .map(|c| s(c, "/reason").to_string())
            .unwrap_or_default();
        if complete {
            set_cond(
                &mut status,
                "Progressing",
                true,
                "NewReplicaSetAvailable",
                &format!("ReplicaSet {rs_name:?} has successfully progressed."),
                false,
            );
        } else if new_rs.is_some() && (current.is_none() || rs_name_changed(&old, rs_name)) {
            set_cond(
                &mut status,
                "Progressing",
                true,
                "NewReplicaSetCreated",
                &format!("Created new replica set {rs_name:?}"),
                true,
            );
        } else if progressed {
            set_cond(
                &mut status,
                "Progressing",
                true,
                "ReplicaSetUpdated",
                &format!("ReplicaSet {rs_name:?} is progressing."),
                true,
            );
        } else if reason != "NewReplicaSetAvailable" && reason != "ProgressDeadlineExceeded" {
            let since = current
                .as_ref()
                .and_then(|c| c.get("lastUpdateTime"))
                .and_then(Value::as_str)
                .and_then(crate::time::parse_rfc3339)
                .unwrap_or(0);
            let secs = deadline.unwrap_or(600);
            if crate::time::now_secs() > since + secs {
                set_cond(
                    &mut status,
                    "Progressing",
                    false,
                    "ProgressDeadlineExceeded",
                    &format!("ReplicaSet {rs_name:?} has timed out progressing."),
                    false,
                );
            } else {
                st.wake_at(std::time::Instant::now() + std::time::Duration::from_millis(500));
            }
        }
    }
    if status == old {
        return;
    }
    let name = s(d, "/metadata/name");
    let ns = s(d, "/metadata/namespace");
    let _ = cluster.update(deps, ns, name, "status", MANAGER, |x| {
        x["status"] = status;
        true
    });
}

/// Whether the Progressing condition's message names another ReplicaSet than `rs_name`.
fn rs_name_changed(old: &Value, rs_name: &str) -> bool {
    cond(old, "Progressing").is_some_and(|c| !s(c, "/message").contains(&format!("{rs_name:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_keep_transition_times() {
        let mut st = json!({});
        set_cond(&mut st, "Available", true, "A", "m", false);
        let first = st["conditions"][0].clone();
        set_cond(&mut st, "Available", true, "A", "m", false);
        assert_eq!(st["conditions"][0], first);
        set_cond(&mut st, "Available", false, "B", "m", false);
        assert_eq!(st["conditions"][0]["reason"], "B");
        assert_eq!(st["conditions"].as_array().map(Vec::len), Some(1));
    }
}
