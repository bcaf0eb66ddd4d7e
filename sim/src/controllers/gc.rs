//! Garbage collection. Background: objects whose owners (by ownerReference uid) are all gone are
//! deleted (ReplicaSets, ControllerRevisions, Pods and EndpointSlices every turn, every kind every
//! two seconds) (deletes through the API already cascade
//! in the same transaction; this catches dependents created in a race with their owner's
//! deletion). Foreground: owners marked by a `propagationPolicy: Foreground` delete — noticed from
//! their change events, or by a scan of every namespaced kind at start and after missed events —
//! get a `delete::foreground_step` every turn until they are gone.

use std::collections::HashMap;
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

/// Deletes objects whose owners (by ownerReference uid) are all gone: the kinds the controllers
/// create on every turn, every namespaced kind on a `full` sweep.
fn orphans(app: &App, full: bool) {
    let mut types: HashMap<(String, String), Option<ResourceType>> = HashMap::new();
    let mut kinds: Vec<ResourceType> = [
        ("apps", "replicasets"),
        ("apps", "controllerrevisions"),
        ("", "pods"),
        ("discovery.k8s.io", "endpointslices"),
    ]
    .iter()
    .filter_map(|(group, plural)| rt(app, group, "v1", plural).ok())
    .collect();
    if full {
        let mut seen: std::collections::HashSet<String> =
            kinds.iter().map(ResourceType::store_key).collect();
        for t in app.registry.all() {
            if t.namespaced && !t.create_only && seen.insert(t.store_key()) {
                kinds.push(t);
            }
        }
    }
    for kind in kinds {
        for obj in util::list(app, &kind).iter() {
            let Some(refs) = obj
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let ns = s(&obj, "/metadata/namespace");
            let alive = refs.iter().any(|r| owner_exists(app, &mut types, ns, r));
            if !alive {
                let _ = util::remove(app, &kind, ns, s(&obj, "/metadata/name"));
            }
        }
    }
}

fn owner_exists(
    app: &App,
    types: &mut HashMap<(String, String), Option<ResourceType>>,
    ns: &str,
    r: &Value,
) -> bool {
    let key = (s(r, "/apiVersion").to_string(), s(r, "/kind").to_string());
    let Some(ort) = types
        .entry(key)
        .or_insert_with_key(|(av, k)| app.registry.by_kind(av, k))
        .as_ref()
    else {
        // An owner of a kind this server does not serve: leave the dependent alone.
        return true;
    };
    let ons = if ort.namespaced { ns } else { "" };
    match app.store.get(&ort.store_key(), ons, s(r, "/name")) {
        Ok(Some(o)) => util::uid(&o) == s(r, "/uid"),
        Ok(None) => false,
        Err(_) => true,
    }
}
