//! The StatefulSet controller: ordinal pods `<sts>-0..N-1` (one at a time with OrderedReady, all at
//! once with Parallel), PVCs `<claim>-<sts>-<i>` from the volume claim templates, a
//! ControllerRevision per template, rolling updates from the highest ordinal down to the partition,
//! the adoption of orphaned pods of its name that its selector matches (as after a StatefulSet deleted
//! with `propagationPolicy: Orphan` is created again), and the status `kubectl rollout status` reads
//! (currentRevision/updateRevision, counts).

use serde_json::{Value, json};
use std::sync::Arc;

use super::replicaset::{available, pods_by_owner, ready};
use super::template::template_hash;
use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::util::{self, s};

const REVISION_LABEL: &str = "controller-revision-hash";

struct Kinds {
    sets: ResourceType,
    pods: ResourceType,
    pvcs: ResourceType,
    revisions: ResourceType,
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &[
    "apps/statefulsets",
    "/pods",
    "/persistentvolumeclaims",
    "apps/controllerrevisions",
];

/// One turn over every StatefulSet.
pub fn reconcile(cluster: &Cluster, _st: &mut State) {
    let (Ok(sets), Ok(pods), Ok(pvcs), Ok(revisions)) = (
        cluster.rt("apps", "v1", "statefulsets"),
        cluster.rt("", "v1", "pods"),
        cluster.rt("", "v1", "persistentvolumeclaims"),
        cluster.rt("apps", "v1", "controllerrevisions"),
    ) else {
        return;
    };
    let k = Kinds {
        sets,
        pods,
        pvcs,
        revisions,
    };
    let all_pods = cluster.list(&k.pods);
    let owned = pods_by_owner(&all_pods);
    for set in cluster.list(&k.sets).iter() {
        if util::terminating(set) {
            continue;
        }
        if adopt_orphans(cluster, &k, set, &all_pods) {
            continue;
        }
        let mine: Vec<&Value> = owned.get(util::uid(set)).cloned().unwrap_or_default();
        if !sync(cluster, &k, set, &mine) {
            write_status(cluster, &k, set, &mine);
        }
    }
}

/// Adopts the pods of the set's namespace that have no controller, carry its name with an ordinal and
/// match its selector (`matchLabels`; a selector with expressions adopts nothing here), as the real
/// controller's `ClaimPods` does; true when it wrote something.
fn adopt_orphans(cluster: &Cluster, k: &Kinds, set: &Value, pods: &[Arc<Value>]) -> bool {
    let ns = s(set, "/metadata/namespace");
    let name = s(set, "/metadata/name");
    let Some(selector) = set
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    else {
        return false;
    };
    let has_expressions = set
        .pointer("/spec/selector/matchExpressions")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    if has_expressions {
        return false;
    }
    let mut wrote = false;
    for pod in pods {
        let orphan = s(pod, "/metadata/namespace") == ns
            && !util::terminating(pod)
            && util::controller_uid(pod).is_none()
            && ordinal(name, pod).is_some()
            && selector
                .iter()
                .all(|(k, v)| pod.pointer("/metadata/labels").and_then(|l| l.get(k)) == Some(v));
        if !orphan {
            continue;
        }
        let owner = util::owner_ref(set);
        wrote |= cluster
            .update(&k.pods, ns, s(pod, "/metadata/name"), "", MANAGER, |p| {
                if util::controller_uid(p).is_some() {
                    return false;
                }
                let Some(meta) = p.get_mut("metadata").and_then(Value::as_object_mut) else {
                    return false;
                };
                let refs = meta.entry("ownerReferences").or_insert_with(|| json!([]));
                match refs.as_array_mut() {
                    Some(refs) => {
                        refs.push(owner);
                        true
                    }
                    None => false,
                }
            })
            .is_ok();
    }
    wrote
}

fn ordinal(set_name: &str, pod: &Value) -> Option<i64> {
    s(pod, "/metadata/name")
        .strip_prefix(set_name)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

fn update_revision(set: &Value) -> String {
    let template = set.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let hash = template_hash(&template, util::i(set, "/status/collisionCount", 0));
    format!("{}-{hash}", s(set, "/metadata/name"))
}

/// Creates, deletes or replaces pods; true when it wrote something.
fn sync(cluster: &Cluster, k: &Kinds, set: &Value, mine: &[&Value]) -> bool {
    let ns = s(set, "/metadata/namespace");
    let name = s(set, "/metadata/name");
    let want = util::i(set, "/spec/replicas", 1).max(0);
    let parallel = s(set, "/spec/podManagementPolicy") == "Parallel";
    let rev = update_revision(set);
    ensure_revision(cluster, k, set, &rev);
    let mut by_ord: Vec<(i64, &Value)> = mine
        .iter()
        .filter_map(|p| ordinal(name, p).map(|o| (o, *p)))
        .collect();
    by_ord.sort_by_key(|(o, _)| *o);
    let all_ready = by_ord.iter().all(|(_, p)| ready(p));
    let mut wrote = false;
    // Create missing ordinals (in order, each after the previous is Ready, unless Parallel).
    for i in 0..want {
        if by_ord.iter().any(|(o, _)| *o == i) {
            continue;
        }
        if !parallel && !by_ord.iter().filter(|(o, _)| *o < i).all(|(_, p)| ready(p)) {
            break;
        }
        ensure_claims(cluster, k, set, i);
        if cluster
            .create(&k.pods, ns, pod_for(set, i, &rev), MANAGER)
            .is_ok()
        {
            wrote = true;
            cluster.event(
                set,
                false,
                "SuccessfulCreate",
                &format!("create Pod {name}-{i} in StatefulSet {name} successful"),
                "statefulset-controller",
            );
        }
        if !parallel {
            return wrote;
        }
    }
    if wrote {
        return true;
    }
    // Scale down from the highest ordinal.
    let extra: Vec<&(i64, &Value)> = by_ord.iter().filter(|(o, _)| *o >= want).collect();
    if let Some((_, p)) = extra.last() {
        if parallel {
            for (_, p) in &extra {
                wrote |= cluster.remove(&k.pods, ns, s(p, "/metadata/name")).is_ok();
            }
            return wrote;
        }
        if all_ready {
            return cluster.remove(&k.pods, ns, s(p, "/metadata/name")).is_ok();
        }
        return false;
    }
    // Rolling update: replace the highest outdated ordinal at or above the partition.
    if s(set, "/spec/updateStrategy/type") == "OnDelete" || !all_ready {
        return false;
    }
    let partition = util::i(set, "/spec/updateStrategy/rollingUpdate/partition", 0);
    if let Some((_, p)) = by_ord
        .iter()
        .rev()
        .find(|(o, p)| *o >= partition && pod_revision(p) != rev)
    {
        return cluster.remove(&k.pods, ns, s(p, "/metadata/name")).is_ok();
    }
    false
}

fn pod_revision(p: &Value) -> &str {
    s(p, &format!("/metadata/labels/{REVISION_LABEL}"))
}

fn ensure_revision(cluster: &Cluster, k: &Kinds, set: &Value, rev: &str) {
    let ns = s(set, "/metadata/namespace");
    if matches!(cluster.get(&k.revisions, ns, rev), Ok(Some(_))) {
        return;
    }
    let existing = cluster
        .list(&k.revisions)
        .iter()
        .filter(|r| util::controller_uid(r) == Some(util::uid(set)))
        .map(|r| util::i(r, "/revision", 0))
        .max()
        .unwrap_or(0);
    let mut template = set.pointer("/spec/template").cloned().unwrap_or(json!({}));
    template["$patch"] = json!("replace");
    let mut labels = set
        .pointer("/spec/selector/matchLabels")
        .cloned()
        .unwrap_or(json!({}));
    labels[REVISION_LABEL] = json!(rev.rsplit('-').next().unwrap_or(""));
    let obj = json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": rev, "namespace": ns, "labels": labels,
                     "ownerReferences": [util::owner_ref(set)]},
        "data": {"spec": {"template": template}},
        "revision": existing + 1,
    });
    let _ = cluster.create(&k.revisions, ns, obj, MANAGER);
}

fn ensure_claims(cluster: &Cluster, k: &Kinds, set: &Value, i: i64) {
    let ns = s(set, "/metadata/namespace");
    let name = s(set, "/metadata/name");
    let templates = set
        .pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for t in templates {
        let claim = format!("{}-{name}-{i}", s(&t, "/metadata/name"));
        if matches!(cluster.get(&k.pvcs, ns, &claim), Ok(Some(_))) {
            continue;
        }
        let mut meta = t.get("metadata").cloned().unwrap_or(json!({}));
        meta["name"] = json!(claim);
        meta["namespace"] = json!(ns);
        let mut labels = set
            .pointer("/spec/selector/matchLabels")
            .cloned()
            .unwrap_or(json!({}));
        if let (Some(l), Some(extra)) = (
            labels.as_object_mut(),
            meta.get("labels").and_then(Value::as_object),
        ) {
            for (k, v) in extra {
                l.insert(k.clone(), v.clone());
            }
        }
        meta["labels"] = labels;
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                         "spec": t.get("spec").cloned().unwrap_or(json!({}))});
        let _ = cluster.create(&k.pvcs, ns, pvc, MANAGER);
    }
}

fn pod_for(set: &Value, i: i64, rev: &str) -> Value {
    let name = s(set, "/metadata/name");
    let pod_name = format!("{name}-{i}");
    let tmpl = super::template::pod_template(set);
    let mut meta = tmpl.get("metadata").cloned().unwrap_or(json!({}));
    meta["name"] = json!(pod_name);
    meta["namespace"] = json!(s(set, "/metadata/namespace"));
    meta["ownerReferences"] = json!([util::owner_ref(set)]);
    meta["labels"][REVISION_LABEL] = json!(rev);
    meta["labels"]["statefulset.kubernetes.io/pod-name"] = json!(pod_name);
    meta["labels"]["apps.kubernetes.io/pod-index"] = json!(i.to_string());
    if let Some(m) = meta.as_object_mut() {
        m.remove("creationTimestamp");
    }
    let mut spec = tmpl.get("spec").cloned().unwrap_or(json!({}));
    spec["hostname"] = json!(pod_name);
    let service = s(set, "/spec/serviceName");
    if !service.is_empty() {
        spec["subdomain"] = json!(service);
    }
    let claims = set
        .pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !claims.is_empty() {
        if !spec["volumes"].is_array() {
            spec["volumes"] = json!([]);
        }
        if let Some(vols) = spec["volumes"].as_array_mut() {
            for c in &claims {
                let vname = s(c, "/metadata/name");
                vols.retain(|v| s(v, "/name") != vname);
                vols.push(json!({"name": vname,
                    "persistentVolumeClaim": {"claimName": format!("{vname}-{pod_name}")}}));
            }
        }
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
}

fn write_status(cluster: &Cluster, k: &Kinds, set: &Value, mine: &[&Value]) {
    let rev = update_revision(set);
    let want = util::i(set, "/spec/replicas", 1).max(0);
    let min_ready = util::i(set, "/spec/minReadySeconds", 0);
    let old = set.get("status").cloned().unwrap_or(json!({}));
    let updated = mine.iter().filter(|p| pod_revision(p) == rev).count() as i64;
    let mut current_rev = s(&old, "/currentRevision").to_string();
    if current_rev.is_empty() || (updated == want && mine.len() as i64 == want) {
        current_rev = rev.clone();
    }
    let current = mine
        .iter()
        .filter(|p| pod_revision(p) == current_rev)
        .count();
    let mut status = json!({
        "observedGeneration": util::i(set, "/metadata/generation", 1),
        "replicas": mine.len(),
        "readyReplicas": mine.iter().filter(|p| ready(p)).count(),
        "currentReplicas": current,
        "updatedReplicas": updated,
        "availableReplicas": mine.iter().filter(|p| available(p, min_ready)).count(),
        "currentRevision": current_rev,
        "updateRevision": rev,
        "collisionCount": util::i(set, "/status/collisionCount", 0),
    });
    if let Some(m) = status.as_object_mut() {
        for key in ["readyReplicas", "currentReplicas", "updatedReplicas"] {
            if m.get(key) == Some(&json!(0)) {
                m.remove(key);
            }
        }
    }
    if status == old {
        return;
    }
    let ns = s(set, "/metadata/namespace");
    let name = s(set, "/metadata/name");
    let _ = cluster.update(&k.sets, ns, name, "status", MANAGER, |x| {
        x["status"] = status;
        true
    });
}
