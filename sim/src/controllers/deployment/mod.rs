//! The Deployment controller: one ReplicaSet per pod template (named `<deployment>-<hash>`, labelled
//! `pod-template-hash`, annotated with its revision), rolling updates honouring maxSurge and
//! maxUnavailable (or Recreate), revisionHistoryLimit, and the status clients read: counts,
//! observedGeneration and the `Available` and `Progressing` conditions (including
//! `ProgressDeadlineExceeded`; `status.rs`).

mod status;

use serde_json::{Value, json};

use super::template::{as_stored, template_hash};
use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::util::{self, s};
use status::write_status;

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn surge_rounds_up_and_unavailable_down() {
        assert_eq!(scaled(None, 3, "25%", true), 1);
        assert_eq!(scaled(None, 3, "25%", false), 0);
        assert_eq!(scaled(Some(&json!(2)), 3, "25%", false), 2);
        assert_eq!(scaled(Some(&json!("50%")), 5, "25%", true), 3);
    }
}
