//! Edge handlers on the level-based machinery: what each object looked like when last handled, so a
//! reconcile can tell a create from an update (and pass the old object), a due timer from a no-op, and a
//! re-list can find objects that vanished while the watch was down.
//!
//! The state lives in memory. A change counts when the object's essence changes: everything but
//! `status` and metadata other than labels and annotations (so adding a finalizer or a status write is
//! not an update). A failed handler leaves the state alone, so its retry sees the same edge again.
//!
//! The essence is a digest of the object serialized, so it is computed only when a second version of an
//! object is seen (an initial sync or a burst of creates computes none), and not at all when the
//! resourceVersion did not move (the same stored object, e.g. a requeue or a re-list).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::Resource;
use serde::Serialize;

/// What an object looked like when its last edge was handled.
struct Seen<K> {
    obj: Arc<K>,
    /// The digest of `obj`'s essence, once asked for.
    essence: Option<[u8; 32]>,
    next_timer: Option<Instant>,
}

impl<K: Resource + Serialize> Seen<K> {
    /// Whether `obj` differs from the handled version in its essence.
    fn changed_in(&mut self, obj: &K) -> bool {
        if self.same_version(obj) {
            return false;
        }
        let handled = *self
            .essence
            .get_or_insert_with(|| essence(self.obj.as_ref()));
        handled != essence(obj)
    }

    /// Whether `obj` is the stored version handled (the same resourceVersion: the same object).
    fn same_version(&self, obj: &K) -> bool {
        let (old, new) = (self.obj.meta(), obj.meta());
        old.resource_version.is_some() && old.resource_version == new.resource_version
    }
}

/// Which edge is due for an object now.
pub(crate) enum Due<K> {
    Create,
    Update(Arc<K>),
    Timer,
    /// Nothing changed and no timer is due.
    Nothing,
}

/// The last handled version of every object one edge controller has seen.
pub(crate) struct EdgeState<K> {
    every: Option<Duration>,
    seen: Mutex<HashMap<String, Seen<K>>>,
}

/// `namespace/name` (or `name`), the key of per-object state.
pub(crate) fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    match &meta.namespace {
        Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or_default()),
        None => meta.name.clone().unwrap_or_default(),
    }
}

/// The digest of what counts as a change of `obj`.
pub(crate) fn essence<K: Resource + Serialize>(obj: &K) -> [u8; 32] {
    let mut value = serde_json::to_value(obj).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("status");
        let meta = obj.meta();
        map.insert(
            "metadata".into(),
            serde_json::json!({ "labels": meta.labels, "annotations": meta.annotations }),
        );
    }
    *blake3::hash(value.to_string().as_bytes()).as_bytes()
}

impl<K: Resource + Serialize> EdgeState<K> {
    pub fn new(every: Option<Duration>) -> Self {
        EdgeState {
            every,
            seen: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Seen<K>>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The edge due for `obj` (`known`: count it as created even when unseen, e.g. it carries our
    /// finalizer from an earlier run).
    pub fn due(&self, key: &str, obj: &Arc<K>, known: bool) -> Due<K> {
        let mut seen = self.lock();
        let Some(s) = seen.get_mut(key) else {
            return if known { Due::Nothing } else { Due::Create };
        };
        if s.changed_in(obj.as_ref()) {
            return Due::Update(s.obj.clone());
        }
        match s.next_timer {
            Some(at) if at <= Instant::now() => Due::Timer,
            _ => Due::Nothing,
        }
    }

    /// Records `obj` (at `key`, see [`key_of`]) as handled (`timer_fired`: its timer restarts now); how
    /// long until its timer is due (`None` without `every:`).
    pub fn handled(&self, key: &str, obj: &Arc<K>, timer_fired: bool) -> Option<Duration> {
        let mut seen = self.lock();
        let now = Instant::now();
        let fresh_timer = || self.every.map(|e| now + e);
        let next_timer = match seen.get_mut(key) {
            Some(s) => {
                // The same stored version keeps its digest; another one gets its own when next compared.
                if !s.same_version(obj) {
                    s.essence = None;
                }
                s.obj = obj.clone();
                s.next_timer = s.next_timer.filter(|_| !timer_fired).or_else(fresh_timer);
                s.next_timer
            }
            None => {
                let next_timer = fresh_timer();
                seen.insert(
                    key.to_string(),
                    Seen {
                        obj: obj.clone(),
                        essence: None,
                        next_timer,
                    },
                );
                next_timer
            }
        };
        next_timer.map(|at| at.saturating_duration_since(now))
    }

    /// Forgets `key`, returning the last handled version (the object `on_delete` gets).
    pub fn forget(&self, key: &str) -> Option<Arc<K>> {
        self.lock().remove(key).map(|s| s.obj)
    }

    /// Keys of objects handled before that `present` (the cache after a re-list) no longer holds.
    pub fn vanished(&self, present: &std::collections::HashSet<String>) -> Vec<String> {
        self.lock()
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn cm(rv: &str, value: &str) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_string(), value.to_string())].into()),
            ..ConfigMap::default()
        })
    }

    #[test]
    fn create_then_update_with_the_old_object_and_metadata_only_changes_are_not_updates() {
        let state = EdgeState::new(None);
        let first = cm("1", "x");
        assert!(matches!(state.due("ns/a", &first, false), Due::Create));
        assert_eq!(state.handled("ns/a", &first, false), None);
        let mut finalized = (*cm("2", "x")).clone();
        finalized.metadata.finalizers = Some(vec!["f".into()]);
        assert!(matches!(
            state.due("ns/a", &Arc::new(finalized), false),
            Due::Nothing
        ));
        match state.due("ns/a", &cm("3", "y"), false) {
            Due::Update(old) => assert_eq!(old.data.as_ref().unwrap()["k"], "x"),
            _ => panic!("a data change is an update"),
        }
        assert_eq!(
            state
                .forget("ns/a")
                .map(|o| o.data.clone().unwrap()["k"].clone()),
            Some("x".into())
        );
        assert!(
            matches!(state.due("ns/a", &first, true), Due::Nothing),
            "known objects are not re-created"
        );
    }

    #[test]
    fn a_timer_is_due_after_its_period_and_restarts_when_fired() {
        let state = EdgeState::new(Some(Duration::from_millis(20)));
        let obj = cm("1", "x");
        state.handled("ns/a", &obj, false);
        assert!(matches!(state.due("ns/a", &obj, false), Due::Nothing));
        std::thread::sleep(Duration::from_millis(25));
        assert!(matches!(state.due("ns/a", &obj, false), Due::Timer));
        state.handled("ns/a", &obj, true);
        assert!(matches!(state.due("ns/a", &obj, false), Due::Nothing));
        let present = std::collections::HashSet::new();
        assert_eq!(state.vanished(&present), vec!["ns/a".to_string()]);
    }
}
