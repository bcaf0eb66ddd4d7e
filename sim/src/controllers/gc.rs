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

use super::util::{self, rt, s};
use crate::app::App;
use crate::registry::ResourceType;

/// How soon a turn follows while foreground deletions are in progress.
const FOREGROUND_STEP: Duration = Duration::from_millis(20);

/// How often every namespaced kind (not only the controllers' own) is swept for dangling owners.
const FULL_SWEEP: Duration = Duration::from_secs(2);

/// One turn: foreground deletions in progress, then the background sweep (the controllers' kinds
/// every turn, every kind every [`FULL_SWEEP`]).
pub fn reconcile(app: &App, st: &mut super::State) {
    foreground(app, st);
    let now = Instant::now();
    let full = st.last_full_sweep.is_none_or(|t| now >= t + FULL_SWEEP);
    match st.last_full_sweep {
        // A turn ran, so something changed: the other kinds get their sweep when it is due, even
        // if nothing else changes by then (idle turns are skipped).
        Some(t) if !full => st.wake_at(t + FULL_SWEEP),
        _ => st.last_full_sweep = Some(now),
    }
    orphans(app, full);
}

fn foreground(app: &App, st: &mut super::State) {
    if !st.foreground_scanned {
        let mut keys: Vec<String> = app
            .registry
            .all()
            .iter()
            .filter(|t| t.namespaced && !t.create_only)
            .map(|t| t.store_key())
            .collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let Ok((items, _)) = app.store.list(&key, None, None) else {
                continue;
            };
            for item in items {
                if crate::registry::delete::foreground_pending(&item.object) {
                    st.foreground.insert((key.clone(), item.ns, item.name));
                }
            }
        }
        st.foreground_scanned = true;
    }
    let pending: Vec<(String, String, String)> = st.foreground.iter().cloned().collect();
    for (rk, ns, name) in pending {
        if let Ok(step) = crate::registry::delete::foreground_step(app, &rk, &ns, &name) {
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
fn orphans(app: &App, full: bool) {
    let mut owners = Owners::new();
    let mut kinds: Vec<ResourceType> = [
        ("apps", "replicasets"),
        ("apps", "controllerrevisions"),
        ("", "pods"),
        ("discovery.k8s.io", "endpointslices"),
    ]
    .iter()
    .filter_map(|(group, plural)| rt(app, group, "v1", plural).ok())
    .collect();
    let shared = kinds.len();
    if full {
        let mut seen: HashSet<String> = kinds.iter().map(ResourceType::store_key).collect();
        for t in app.registry.all() {
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
            util::list(app, &kind)
        } else {
            owned_objects(app, &kind)
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
            let alive = refs.iter().any(|r| owner_exists(app, &mut owners, ns, r));
            let name = s(obj, "/metadata/name");
            if !alive && still_orphaned(app, &mut owners, &kind, ns, name) {
                let _ = util::remove(app, &kind, ns, name);
            }
        }
    }
}

/// The objects of a kind that name owners (the others are not parsed).
fn owned_objects(app: &App, kind: &ResourceType) -> std::sync::Arc<Vec<Value>> {
    let page = app
        .store
        .list_raw(&kind.store_key(), None, None, None, |data| {
            Ok(data
                .contains("\"ownerReferences\"")
                .then(|| serde_json::from_str::<Value>(data).ok())
                .flatten())
        });
    page.map(|p| std::sync::Arc::new(p.items.into_iter().map(|(_, _, o)| o).collect()))
        .unwrap_or_default()
}

/// Whether the object, as stored now, still names owners and none of them exists: the list swept may
/// predate a change that orphaned it (a `--cascade=orphan` delete removes the ownerReferences and
/// the owner in one write, which a list read just before it and an owner list read just after it
/// would see as a dependent whose owner is gone).
fn still_orphaned(
    app: &App,
    owners: &mut Owners,
    kind: &ResourceType,
    ns: &str,
    name: &str,
) -> bool {
    let Ok(Some(now)) = app.store.get(&kind.store_key(), ns, name) else {
        return false;
    };
    now.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
        .is_some_and(|refs| !refs.iter().any(|r| owner_exists(app, owners, ns, r)))
}

/// Whether the owner `r` names exists: found by uid in the shared list of its kind, or (a list may
/// lag another process's writes until they are polled) read from the store when it is not there.
fn owner_exists(app: &App, owners: &mut Owners, ns: &str, r: &Value) -> bool {
    let key = (s(r, "/apiVersion").to_string(), s(r, "/kind").to_string());
    let Some((ort, uids)) = owners
        .entry(key)
        .or_insert_with_key(|(av, k)| {
            let ort = app.registry.by_kind(av, k)?;
            let uids = util::list(app, &ort)
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
    match app.store.get(&ort.store_key(), ons, s(r, "/name")) {
        Ok(Some(o)) => util::uid(&o) == s(r, "/uid"),
        Ok(None) => false,
        Err(_) => true,
    }
}
