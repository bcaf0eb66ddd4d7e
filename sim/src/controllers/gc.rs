//! Garbage collection. Background: objects whose owners (by ownerReference uid) are all gone are
//! deleted (ReplicaSets, ControllerRevisions, Pods and EndpointSlices every turn, every kind every
//! two seconds) (deletes through the API already cascade
//! in the same transaction; this catches dependents created in a race with their owner's
//! deletion). Foreground: owners marked by a `propagationPolicy: Foreground` delete — noticed from
//! their change events, or by a scan of every namespaced kind at start and after missed events —
//! get a `delete::foreground_step` every turn until they are gone.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::util::{self, s};

/// How soon a turn follows while foreground deletions are in progress.
const FOREGROUND_STEP: Duration = Duration::from_millis(20);

/// How often every namespaced kind (not only the controllers' own) is swept for dangling owners.
const FULL_SWEEP: Duration = Duration::from_secs(2);

/// One turn: foreground deletions in progress, then the background sweep (the controllers' kinds
/// every turn, every kind every [`FULL_SWEEP`]).
pub fn reconcile(cluster: &Cluster, st: &mut super::State) {
    foreground(cluster, st);
    let now = Instant::now();
    let full = st.last_full_sweep.is_none_or(|t| now >= t + FULL_SWEEP);
    match st.last_full_sweep {
        // A turn ran, so something changed: the other kinds get their sweep when it is due, even
        // if nothing else changes by then (idle turns are skipped).
        Some(t) if !full => st.wake_at(t + FULL_SWEEP),
        _ => st.last_full_sweep = Some(now),
    }
    orphans(cluster, full);
}

fn foreground(cluster: &Cluster, st: &mut super::State) {
    if !st.foreground_scanned {
        let mut kinds: Vec<ResourceType> = cluster
            .all_types()
            .into_iter()
            .filter(|t| t.namespaced && !t.create_only)
            .collect();
        kinds.sort_by_key(ResourceType::store_key);
        kinds.dedup_by_key(|t| t.store_key());
        for kind in kinds {
            let Ok(pending) = cluster.foreground_pending(&kind) else {
                continue;
            };
            let key = kind.store_key();
            for (ns, name) in pending {
                st.foreground.insert((key.clone(), ns, name));
            }
        }
        st.foreground_scanned = true;
    }
    let pending: Vec<(String, String, String)> = st.foreground.iter().cloned().collect();
    for (rk, ns, name) in pending {
        if let Ok(step) = cluster.foreground_step(&rk, &ns, &name) {
            st.foreground.extend(step.marked);
            if step.done {
                st.foreground.remove(&(rk, ns, name));
            }
        }
    }
    if !st.foreground.is_empty() {
        st.wake_at(Instant::now() + FOREGROUND_STEP);
    }
}

/// Owner kinds by (apiVersion, kind): the served type and the uids of its objects (`None`: not
/// served), found once per sweep.
type Owners = HashMap<(String, String), Option<(ResourceType, HashSet<String>)>>;

/// Deletes objects whose owners (by ownerReference uid) are all gone: the kinds the controllers
/// create on every turn, every namespaced kind on a `full` sweep.
fn orphans(cluster: &Cluster, full: bool) {
    let mut owners = Owners::new();
    let mut kinds: Vec<ResourceType> = [
        ("apps", "replicasets"),
        ("apps", "controllerrevisions"),
        ("", "pods"),
        ("discovery.k8s.io", "endpointslices"),
    ]
    .iter()
    .filter_map(|(group, plural)| cluster.rt(group, "v1", plural).ok())
    .collect();
    let shared = kinds.len();
    if full {
        let mut seen: HashSet<String> = kinds.iter().map(ResourceType::store_key).collect();
        for t in cluster.all_types() {
            if t.namespaced && !t.create_only && seen.insert(t.store_key()) {
                kinds.push(t);
            }
        }
    }
    for (at, kind) in kinds.into_iter().enumerate() {
        // The controllers' kinds come from the shared lists; the others (ConfigMaps, Secrets,
        // Events, custom resources…) are read for this sweep only, parsing just the objects that
        // have owner references.
        let objects = if at < shared {
            cluster.list(&kind)
        } else {
            cluster.list_owned(&kind)
        };
        for obj in objects.iter() {
            let Some(refs) = obj
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let ns = s(obj, "/metadata/namespace");
            let alive = refs
                .iter()
                .any(|r| owner_exists(cluster, &mut owners, ns, r));
            let name = s(obj, "/metadata/name");
            if !alive && still_orphaned(cluster, &mut owners, &kind, ns, name) {
                let _ = cluster.remove(&kind, ns, name);
            }
        }
    }
}

/// Whether the object, as stored now, still names owners and none of them exists: the list swept may
/// predate a change that orphaned it (a `--cascade=orphan` delete removes the ownerReferences and
/// the owner in one write, which a list read just before it and an owner list read just after it
/// would see as a dependent whose owner is gone).
fn still_orphaned(
    cluster: &Cluster,
    owners: &mut Owners,
    kind: &ResourceType,
    ns: &str,
    name: &str,
) -> bool {
    let Ok(Some(now)) = cluster.get(kind, ns, name) else {
        return false;
    };
    now.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
        .is_some_and(|refs| !refs.iter().any(|r| owner_exists(cluster, owners, ns, r)))
}

/// Whether the owner `r` names exists: found by uid in the shared list of its kind, or (a list may
/// lag another process's writes until they are polled) read from the store when it is not there.
fn owner_exists(cluster: &Cluster, owners: &mut Owners, ns: &str, r: &Value) -> bool {
    let key = (s(r, "/apiVersion").to_string(), s(r, "/kind").to_string());
    let Some((ort, uids)) = owners
        .entry(key)
        .or_insert_with_key(|(av, k)| {
            let ort = cluster.by_kind(av, k)?;
            let uids = cluster
                .list(&ort)
                .iter()
                .map(|o| util::uid(o).to_string())
                .collect();
            Some((ort, uids))
        })
        .as_ref()
    else {
        // An owner of a kind this server does not serve: leave the dependent alone.
        return true;
    };
    if uids.contains(s(r, "/uid")) {
        return true;
    }
    let ons = if ort.namespaced { ns } else { "" };
    match cluster.get(ort, ons, s(r, "/name")) {
        Ok(Some(o)) => util::uid(&o) == s(r, "/uid"),
        Ok(None) => false,
        Err(_) => true,
    }
}
