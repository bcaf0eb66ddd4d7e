//! The ReplicaSet controller: keeps `spec.replicas` active pods per ReplicaSet (creating them from
//! the template, deleting the least ready and newest first) and reports replicas, ready and
//! available counts (available = Ready for `minReadySeconds`) in its status.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{MANAGER, State};
use crate::cluster::Cluster;
use crate::util::{self, s};

/// Whether a pod counts towards its ReplicaSet (not terminating, not finished).
pub fn active(pod: &Value) -> bool {
    !util::terminating(pod) && !matches!(s(pod, "/status/phase"), "Succeeded" | "Failed")
}

/// Whether the pod's Ready condition is True.
pub fn ready(pod: &Value) -> bool {
    ready_since(pod).is_some()
}

/// When the pod's Ready condition last turned True (Unix seconds), if it is True.
fn ready_since(pod: &Value) -> Option<i64> {
    let c = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")?;
    Some(
        c.get("lastTransitionTime")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_rfc3339)
            .unwrap_or(0),
    )
}

/// Whether the pod has been Ready for at least `min_ready` seconds.
pub fn available(pod: &Value, min_ready: i64) -> bool {
    ready_since(pod).is_some_and(|t| min_ready <= 0 || crate::time::now_secs() >= t + min_ready)
}

/// Active pods by the uid of their controller.
pub fn pods_by_owner(pods: &[Arc<Value>]) -> HashMap<String, Vec<&Value>> {
    let mut out: HashMap<String, Vec<&Value>> = HashMap::new();
    for p in pods.iter().filter(|p| active(p)) {
        if let Some(o) = util::controller_uid(p) {
            out.entry(o.to_string()).or_default().push(p);
        }
    }
    out
}

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &["apps/replicasets", "/pods"];

/// One turn over every ReplicaSet.
pub fn reconcile(cluster: &Cluster, st: &mut State) {
    let (Ok(rss), Ok(pods)) = (
        cluster.rt("apps", "v1", "replicasets"),
        cluster.rt("", "v1", "pods"),
    ) else {
        return;
    };
    let all_pods = cluster.list(&pods);
    let owned = pods_by_owner(&all_pods);
    for rs in cluster.list(&rss).iter() {
        if util::terminating(rs) {
            continue;
        }
        let ns = s(rs, "/metadata/namespace");
        let name = s(rs, "/metadata/name");
        let mine: Vec<&Value> = owned.get(util::uid(rs)).cloned().unwrap_or_default();
        let want = util::i(rs, "/spec/replicas", 1).max(0) as usize;
        if mine.len() < want {
            for _ in mine.len()..want {
                let pod = pod_for(rs, ns, name);
                match cluster.create(&pods, ns, pod, MANAGER) {
                    Ok(p) => cluster.event(
                        rs,
                        false,
                        "SuccessfulCreate",
                        &format!("Created pod: {}", s(&p, "/metadata/name")),
                        "replicaset-controller",
                    ),
                    Err(_) => break,
                }
            }
        } else if mine.len() > want {
            let mut victims = mine.clone();
            // Unscheduled, then not ready, then newest first.
            victims.sort_by_key(|p| {
                (
                    !s(p, "/spec/nodeName").is_empty(),
                    ready(p),
                    std::cmp::Reverse(s(p, "/metadata/creationTimestamp").to_string()),
                )
            });
            for p in victims.iter().take(mine.len() - want) {
                if cluster.remove(&pods, ns, s(p, "/metadata/name")).is_ok() {
                    cluster.event(
                        rs,
                        false,
                        "SuccessfulDelete",
                        &format!("Deleted pod: {}", s(p, "/metadata/name")),
                        "replicaset-controller",
                    );
                }
            }
        }
        let min_ready = util::i(rs, "/spec/minReadySeconds", 0);
        let ready_n = mine.iter().filter(|p| ready(p)).count();
        let avail_n = mine.iter().filter(|p| available(p, min_ready)).count();
        if avail_n < ready_n {
            st.wake_at(std::time::Instant::now() + std::time::Duration::from_millis(500));
        }
        let mut status = json!({
            "replicas": mine.len(),
            "fullyLabeledReplicas": mine.len(),
            "observedGeneration": util::i(rs, "/metadata/generation", 1),
        });
        if ready_n > 0 {
            status["readyReplicas"] = json!(ready_n);
        }
        if avail_n > 0 {
            status["availableReplicas"] = json!(avail_n);
        }
        if mine.is_empty() {
            status
                .as_object_mut()
                .map(|m| m.remove("fullyLabeledReplicas"));
        }
        if rs.get("status") == Some(&status) {
            continue;
        }
        let _ = cluster.update(&rss, ns, name, "status", MANAGER, |r| {
            r["status"] = status;
            true
        });
    }
}

/// A new pod for `rs`, from its template.
fn pod_for(rs: &Value, ns: &str, name: &str) -> Value {
    let tmpl = super::template::pod_template(rs);
    let mut meta = tmpl.get("metadata").cloned().unwrap_or(json!({}));
    let prefix = format!("{name}-");
    meta["name"] = json!(format!(
        "{prefix}{}",
        crate::registry::object::random::name_suffix()
    ));
    meta["generateName"] = json!(prefix);
    meta["namespace"] = json!(ns);
    meta["ownerReferences"] = json!([util::owner_ref(rs)]);
    if let Some(m) = meta.as_object_mut() {
        m.remove("creationTimestamp");
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": meta,
        "spec": tmpl.get("spec").cloned().unwrap_or(json!({})),
    })
}
