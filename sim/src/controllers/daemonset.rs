//! The DaemonSet controller: one pod per schedulable node (bound to it directly), rolling updates
//! that replace outdated pods up to `maxUnavailable` at a time, and the status
//! `kubectl rollout status ds` reads.

use serde_json::{Value, json};

use super::replicaset::{available, pods_by_owner, ready};
use super::template::template_hash;
use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::util::{self, s};

const REVISION_LABEL: &str = "controller-revision-hash";

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &["apps/daemonsets", "/pods", "/nodes"];

/// One turn over every DaemonSet.
pub fn reconcile(cluster: &Cluster, _st: &mut State) {
    let (Ok(sets), Ok(pods), Ok(nodes)) = (
        cluster.rt("apps", "v1", "daemonsets"),
        cluster.rt("", "v1", "pods"),
        cluster.rt("", "v1", "nodes"),
    ) else {
        return;
    };
    let node_names: Vec<String> = cluster
        .list(&nodes)
        .iter()
        .filter(|n| n.pointer("/spec/unschedulable").and_then(Value::as_bool) != Some(true))
        .map(|n| s(n, "/metadata/name").to_string())
        .collect();
    let all_pods = cluster.list(&pods);
    let owned = pods_by_owner(&all_pods);
    for set in cluster.list(&sets).iter() {
        if util::terminating(set) {
            continue;
        }
        let ns = s(set, "/metadata/namespace");
        let mine: Vec<&Value> = owned.get(util::uid(set)).cloned().unwrap_or_default();
        let template = set.pointer("/spec/template").cloned().unwrap_or(json!({}));
        let hash = template_hash(&template, util::i(set, "/status/collisionCount", 0));
        let mut wrote = false;
        for node in &node_names {
            let on_node: Vec<&&Value> = mine
                .iter()
                .filter(|p| s(p, "/spec/nodeName") == node)
                .collect();
            if on_node.is_empty() {
                let pod = pod_for(set, node, &hash);
                wrote |= cluster.create(&pods, ns, pod, MANAGER).is_ok();
            }
            for extra in on_node.iter().skip(1) {
                wrote |= cluster
                    .remove(&pods, ns, s(extra, "/metadata/name"))
                    .is_ok();
            }
        }
        for p in mine
            .iter()
            .filter(|p| !node_names.iter().any(|n| n == s(p, "/spec/nodeName")))
        {
            wrote |= cluster.remove(&pods, ns, s(p, "/metadata/name")).is_ok();
        }
        if !wrote && s(set, "/spec/updateStrategy/type") != "OnDelete" {
            let max_unavailable =
                match set.pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable") {
                    Some(Value::Number(n)) => n.as_i64().unwrap_or(1),
                    Some(Value::String(p)) => {
                        let pct: i64 = p.trim_end_matches('%').parse().unwrap_or(0);
                        (pct * node_names.len() as i64 / 100).max(1)
                    }
                    _ => 1,
                };
            let unavailable = mine.iter().filter(|p| !ready(p)).count() as i64;
            let budget = (max_unavailable - unavailable).max(0) as usize;
            for p in mine
                .iter()
                .filter(|p| s(p, &format!("/metadata/labels/{REVISION_LABEL}")) != hash)
                .take(budget)
            {
                wrote |= cluster.remove(&pods, ns, s(p, "/metadata/name")).is_ok();
            }
        }
        if wrote {
            continue;
        }
        let min_ready = util::i(set, "/spec/minReadySeconds", 0);
        let desired = node_names.len();
        let scheduled = node_names
            .iter()
            .filter(|n| mine.iter().any(|p| s(p, "/spec/nodeName") == n.as_str()))
            .count();
        let n_ready = mine.iter().filter(|p| ready(p)).count();
        let n_avail = mine.iter().filter(|p| available(p, min_ready)).count();
        let updated = mine
            .iter()
            .filter(|p| s(p, &format!("/metadata/labels/{REVISION_LABEL}")) == hash)
            .count();
        let mut status = json!({
            "currentNumberScheduled": scheduled,
            "desiredNumberScheduled": desired,
            "numberMisscheduled": 0,
            "numberReady": n_ready,
            "observedGeneration": util::i(set, "/metadata/generation", 1),
            "updatedNumberScheduled": updated,
        });
        if n_avail > 0 {
            status["numberAvailable"] = json!(n_avail);
        }
        if desired > n_avail {
            status["numberUnavailable"] = json!(desired - n_avail);
        }
        if set.get("status") == Some(&status) {
            continue;
        }
        let name = s(set, "/metadata/name");
        let _ = cluster.update(&sets, ns, name, "status", MANAGER, |x| {
            x["status"] = status;
            true
        });
    }
}

fn pod_for(set: &Value, node: &str, hash: &str) -> Value {
    let name = s(set, "/metadata/name");
    let tmpl = super::template::pod_template(set);
    let mut meta = tmpl.get("metadata").cloned().unwrap_or(json!({}));
    let suffix = &crate::registry::object::new_uid()[..5];
    meta["name"] = json!(format!("{name}-{suffix}"));
    meta["generateName"] = json!(format!("{name}-"));
    meta["namespace"] = json!(s(set, "/metadata/namespace"));
    meta["ownerReferences"] = json!([util::owner_ref(set)]);
    meta["labels"][REVISION_LABEL] = json!(hash);
    meta["labels"]["pod-template-generation"] =
        json!(util::i(set, "/metadata/generation", 1).to_string());
    if let Some(m) = meta.as_object_mut() {
        m.remove("creationTimestamp");
    }
    let mut spec = tmpl.get("spec").cloned().unwrap_or(json!({}));
    spec["nodeName"] = json!(node);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
}
