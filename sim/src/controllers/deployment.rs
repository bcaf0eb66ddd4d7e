//! The Deployment controller: one ReplicaSet per pod template (named `<deployment>-<hash>`, labelled
//! `pod-template-hash`, annotated with its revision), rolling updates honouring maxSurge and
//! maxUnavailable (or Recreate), revisionHistoryLimit, and the status clients read: counts,
//! observedGeneration and the `Available` and `Progressing` conditions (including
//! `ProgressDeadlineExceeded`).

use serde_json::{Value, json};

use super::cluster::Cluster;
use super::util::{self, s};
use super::{MANAGER, State};
use crate::registry::ResourceType;

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";

/// The pod-template hash as the real controller spells it: FNV-32a of the template (and the
/// collision count), written as decimal digits mapped onto the "safe" alphabet.
pub fn template_hash(template: &Value, collision: i64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let text = serde_json::to_string(&as_stored(template)).unwrap_or_default();
    let mut h: u32 = 2_166_136_261;
    for b in text.bytes().chain(collision.to_string().bytes()) {
        h = (h ^ b as u32).wrapping_mul(16_777_619);
    }
    h.to_string()
        .bytes()
        .map(|d| ALPHABET[d as usize % ALPHABET.len()] as char)
        .collect()
}

/// A pod template as the real controller sees it once decoded: `metadata.creationTimestamp: null`
/// (which kubectl sends back on `rollout undo`) is the zero time, the same as no timestamp, and an
/// empty `metadata` the same as none.
fn as_stored(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        if m.get("creationTimestamp") == Some(&Value::Null) {
            m.remove("creationTimestamp");
        }
        if m.is_empty()
            && let Some(o) = t.as_object_mut()
        {
            o.remove("metadata");
        }
    }
    t
}

/// A template without the `pod-template-hash` label (to compare a ReplicaSet's with a Deployment's).
fn strip_hash(template: &Value) -> Value {
    let mut t = as_stored(template);
    if let Some(l) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        l.remove(HASH_LABEL);
        if l.is_empty()
            && let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut)
        {
            m.remove("labels");
        }
    }
    as_stored(&t)
}

/// The ReplicaSet of the current template: the one whose template (without the hash label) equals
/// it, else the one named after its hash.
fn find_new<'a>(owned: &[&'a Value], template: &Value, new_name: &str) -> Option<&'a Value> {
    let template = &as_stored(template);
    owned
        .iter()
        .find(|r| strip_hash(r.pointer("/spec/template").unwrap_or(&Value::Null)) == *template)
        .or_else(|| owned.iter().find(|r| s(r, "/metadata/name") == new_name))
        .copied()
}

fn revision(rs: &Value) -> i64 {
    s(
        rs,
        &format!("/metadata/annotations/{}", REVISION.replace('/', "~1")),
    )
    .parse()
    .unwrap_or(0)
}

/// An int-or-percent of `total`, rounding up or down.
fn scaled(v: Option<&Value>, total: i64, default: &str, up: bool) -> i64 {
    let owned;
    let v = match v {
        Some(v) => v,
        None => {
            owned = json!(default);
            &owned
        }
    };
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(p) => {
            let pct: i64 = p.trim_end_matches('%').parse().unwrap_or(0);
            if up {
                (pct * total + 99) / 100
            } else {
                pct * total / 100
            }
        }
        _ => 0,
    }
}

struct Rs<'a> {
    obj: &'a Value,
    replicas: i64,
    available: i64,
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &["apps/deployments", "apps/replicasets"];

/// One turn over every Deployment.
pub fn reconcile(cluster: &Cluster, st: &mut State) {
    let (Ok(deps), Ok(rss)) = (
        cluster.rt("apps", "v1", "deployments"),
        cluster.rt("apps", "v1", "replicasets"),
    ) else {
        return;
    };
    let all_rs = cluster.list(&rss);
    let rs_of = util::by_controller(&all_rs, |r| !util::terminating(r));
    for d in cluster.list(&deps).iter() {
        if util::terminating(d) {
            continue;
        }
        let owned: Vec<&Value> = rs_of.get(util::uid(d)).cloned().unwrap_or_default();
        let changed = sync(cluster, &deps, &rss, d, &owned);
        if !changed {
            write_status(cluster, &deps, d, &owned, st);
        }
    }
}

/// Creates or scales ReplicaSets; true when it wrote something (status waits for the next turn).
fn sync(
    cluster: &Cluster,
    deps: &ResourceType,
    rss: &ResourceType,
    d: &Value,
    owned: &[&Value],
) -> bool {
    let ns = s(d, "/metadata/namespace");
    let name = s(d, "/metadata/name");
    let template = d.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let collision = util::i(d, "/status/collisionCount", 0);
    let hash = template_hash(&template, collision);
    let new_name = format!("{name}-{hash}");
    let new_rs = find_new(owned, &template, &new_name);
    let olds: Vec<&Value> = owned
        .iter()
        .filter(|r| new_rs.is_none_or(|n| util::uid(n) != util::uid(r)))
        .copied()
        .collect();
    let max_old_rev = olds.iter().map(|r| revision(r)).max().unwrap_or(0);
    let want = util::i(d, "/spec/replicas", 1).max(0);
    let rolling = s(d, "/spec/strategy/type") != "Recreate";
    let (mut surge, mut unavail) = if rolling {
        (
            scaled(
                d.pointer("/spec/strategy/rollingUpdate/maxSurge"),
                want,
                "25%",
                true,
            ),
            scaled(
                d.pointer("/spec/strategy/rollingUpdate/maxUnavailable"),
                want,
                "25%",
                false,
            ),
        )
    } else {
        (0, 0)
    };
    if rolling && surge == 0 && unavail == 0 {
        unavail = 1;
    }
    if want == 0 {
        surge = 0;
    }
    let spec_of = |r: &Value| util::i(r, "/spec/replicas", 0);
    let paused = d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);

    // Keep the Deployment's revision annotation in line with its newest ReplicaSet.
    let new_rev = new_rs.map(revision).unwrap_or(max_old_rev + 1);
    let desired_rev = if new_rs.is_some_and(|n| revision(n) > max_old_rev) {
        new_rev
    } else {
        max_old_rev + 1
    };
    if let Some(n) = new_rs {
        let n_name = s(n, "/metadata/name").to_string();
        let mut wrote = false;
        if revision(n) != desired_rev {
            // A rollback to an older template makes that ReplicaSet the newest revision again.
            wrote |= cluster
                .update(rss, ns, &n_name, "", MANAGER, |r| {
                    r["metadata"]["annotations"][REVISION] = json!(desired_rev.to_string());
                    true
                })
                .is_ok();
        }
        let dep_rev = s(
            d,
            &format!("/metadata/annotations/{}", REVISION.replace('/', "~1")),
        );
        if dep_rev != desired_rev.to_string() {
            wrote |= cluster
                .update(deps, ns, name, "", MANAGER, |x| {
                    if !x["metadata"]["annotations"].is_object() {
                        x["metadata"]["annotations"] = json!({});
                    }
                    x["metadata"]["annotations"][REVISION] = json!(desired_rev.to_string());
                    true
                })
                .is_ok();
        }
        if wrote {
            return true;
        }
    }
    if paused {
        return false;
    }

    let all_spec: i64 = owned.iter().map(|r| spec_of(r)).sum();
    let Some(new_rs) = new_rs else {
        let initial = if rolling {
            (want + surge - all_spec).clamp(0, want)
        } else if olds
            .iter()
            .any(|r| spec_of(r) > 0 || util::i(r, "/status/replicas", 0) > 0)
        {
            0
        } else {
            want
        };
        let rs = new_replica_set(
            d,
            &template,
            &hash,
            &new_name,
            initial,
            max_old_rev + 1,
            want + surge,
        );
        if let Ok(created) = cluster.create(rss, ns, rs, MANAGER) {
            cluster.event(
                d,
                false,
                "ScalingReplicaSet",
                &format!("Scaled up replica set {new_name} from 0 to {initial}"),
                "deployment-controller",
            );
            let _ = created;
        }
        return true;
    };

    let scale = |r: &Value, to: i64| -> bool {
        let r_name = s(r, "/metadata/name").to_string();
        let from = spec_of(r);
        if from != to {
            let dir = if to > from { "up" } else { "down" };
            cluster.event(
                d,
                false,
                "ScalingReplicaSet",
                &format!("Scaled {dir} replica set {r_name} from {from} to {to}"),
                "deployment-controller",
            );
        }
        cluster
            .update(rss, ns, &r_name, "", MANAGER, |x| {
                x["spec"]["replicas"] = json!(to);
                let a = &mut x["metadata"]["annotations"];
                if !a.is_object() {
                    *a = json!({});
                }
                a["deployment.kubernetes.io/desired-replicas"] = json!(want.to_string());
                a["deployment.kubernetes.io/max-replicas"] = json!((want + surge).to_string());
                true
            })
            .is_ok()
    };
    let avail = |r: &Value| util::i(r, "/status/availableReplicas", 0);

    if !rolling {
        // Recreate: old ReplicaSets to zero, wait for their pods to go, then the new one up.
        let mut wrote = false;
        for r in &olds {
            if spec_of(r) > 0 {
                wrote |= scale(r, 0);
            }
        }
        if wrote || olds.iter().any(|r| util::i(r, "/status/replicas", 0) > 0) {
            return wrote;
        }
        if spec_of(new_rs) != want {
            return scale(new_rs, want);
        }
        return cleanup(cluster, rss, d, &olds);
    }

    // Scale the new ReplicaSet up (or down to the target).
    let new_spec = spec_of(new_rs);
    if new_spec > want {
        return scale(new_rs, want);
    }
    if new_spec < want {
        let max_total = want + surge;
        if all_spec < max_total {
            let to = (new_spec + (max_total - all_spec)).min(want);
            if to != new_spec {
                return scale(new_rs, to);
            }
        }
    }

    // Scale old ReplicaSets down as far as maxUnavailable allows.
    let mut olds_sorted: Vec<Rs> = olds
        .iter()
        .map(|r| Rs {
            obj: r,
            replicas: spec_of(r),
            available: avail(r),
        })
        .filter(|r| r.replicas > 0)
        .collect();
    if !olds_sorted.is_empty() {
        olds_sorted.sort_by_key(|r| {
            (
                revision(r.obj),
                s(r.obj, "/metadata/creationTimestamp").to_string(),
            )
        });
        let min_available = want - unavail;
        let new_unavailable = (spec_of(new_rs) - avail(new_rs)).max(0);
        let mut budget = all_spec - min_available - new_unavailable;
        let mut wrote = false;
        // First the old pods that are not available anyway.
        for r in olds_sorted.iter_mut() {
            if budget <= 0 {
                break;
            }
            let unhealthy = (r.replicas - r.available).max(0).min(budget);
            if unhealthy > 0 {
                r.replicas -= unhealthy;
                budget -= unhealthy;
                wrote |= scale(r.obj, r.replicas);
            }
        }
        if wrote {
            return true;
        }
        let total_available: i64 = owned.iter().map(|r| avail(r)).sum();
        let mut can_remove = (total_available - min_available).max(0);
        for r in olds_sorted.iter() {
            if can_remove <= 0 {
                break;
            }
            let down = r.replicas.min(can_remove);
            can_remove -= down;
            wrote |= scale(r.obj, r.replicas - down);
        }
        return wrote;
    }
    cleanup(cluster, rss, d, &olds)
}

/// Deletes old, empty ReplicaSets beyond `revisionHistoryLimit` (oldest revisions first).
fn cleanup(cluster: &Cluster, rss: &ResourceType, d: &Value, olds: &[&Value]) -> bool {
    let limit = util::i(d, "/spec/revisionHistoryLimit", 10).max(0) as usize;
    let mut empty: Vec<&Value> = olds
        .iter()
        .filter(|r| util::i(r, "/spec/replicas", 0) == 0 && util::i(r, "/status/replicas", 0) == 0)
        .copied()
        .collect();
    if empty.len() <= limit {
        return false;
    }
    empty.sort_by_key(|r| revision(r));
    let ns = s(d, "/metadata/namespace");
    let mut wrote = false;
    for r in empty.iter().take(empty.len() - limit) {
        wrote |= cluster.remove(rss, ns, s(r, "/metadata/name")).is_ok();
    }
    wrote
}

fn new_replica_set(
    d: &Value,
    template: &Value,
    hash: &str,
    name: &str,
    replicas: i64,
    rev: i64,
    max: i64,
) -> Value {
    let mut tmpl = template.clone();
    if !tmpl["metadata"].is_object() {
        tmpl["metadata"] = json!({});
    }
    if !tmpl["metadata"]["labels"].is_object() {
        tmpl["metadata"]["labels"] = json!({});
    }
    tmpl["metadata"]["labels"][HASH_LABEL] = json!(hash);
    let mut selector = d.pointer("/spec/selector").cloned().unwrap_or(json!({}));
    if !selector["matchLabels"].is_object() {
        selector["matchLabels"] = json!({});
    }
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let mut annotations = d
        .pointer("/metadata/annotations")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
        a.insert(REVISION.into(), json!(rev.to_string()));
        a.insert(
            "deployment.kubernetes.io/desired-replicas".into(),
            json!(util::i(d, "/spec/replicas", 1).to_string()),
        );
        a.insert(
            "deployment.kubernetes.io/max-replicas".into(),
            json!(max.to_string()),
        );
    }
    let mut spec = json!({
        "replicas": replicas,
        "selector": selector,
        "template": tmpl,
    });
    let min_ready = util::i(d, "/spec/minReadySeconds", 0);
    if min_ready > 0 {
        spec["minReadySeconds"] = json!(min_ready);
    }
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": s(d, "/metadata/namespace"),
            "labels": tmpl["metadata"]["labels"].clone(),
            "annotations": annotations,
            "ownerReferences": [util::owner_ref(d)],
        },
        "spec": spec,
    })
}

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

fn write_status(
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
    fn hashes_use_the_safe_alphabet() {
        let h = template_hash(
            &json!({"spec": {"containers": [{"name": "a", "image": "nginx"}]}}),
            0,
        );
        assert!(!h.is_empty() && h.len() <= 10);
        assert!(
            h.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
        assert_ne!(h, template_hash(&json!({"spec": {}}), 0));
        assert_ne!(
            h,
            template_hash(
                &json!({"spec": {"containers": [{"name": "a", "image": "nginx"}]}}),
                1
            )
        );
    }

    #[test]
    fn surge_rounds_up_and_unavailable_down() {
        assert_eq!(scaled(None, 3, "25%", true), 1);
        assert_eq!(scaled(None, 3, "25%", false), 0);
        assert_eq!(scaled(Some(&json!(2)), 3, "25%", false), 2);
        assert_eq!(scaled(Some(&json!("50%")), 5, "25%", true), 3);
    }

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
