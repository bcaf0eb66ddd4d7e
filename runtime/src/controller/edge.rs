//! Edge handlers on the level-based machinery: what each object looked like when last handled, so a
//! reconcile can tell a create from an update (and pass the old object), a due timer from a no-op, and a
//! re-list can find objects that vanished while the watch was down.
//!
//! The state lives in memory. A change counts when the object's essence changes: everything but
//! `status` and metadata other than labels and annotations (so adding a finalizer or a status write is
//! not an update). A failed handler leaves the state alone, so its retry sees the same edge again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::Resource;
use serde::Serialize;

/// What an object looked like when its last edge was handled.
struct Seen<K> {
    obj: Arc<K>,
    essence: [u8; 32],
    next_timer: Option<Instant>,
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
    pub fn due(&self, obj: &Arc<K>, known: bool) -> Due<K> {
        let seen = self.lock();
        match seen.get(&key_of(obj.as_ref())) {
            None if known => Due::Nothing,
            None => Due::Create,
            Some(s) if s.essence != essence(obj.as_ref()) => Due::Update(s.obj.clone()),
            Some(s) => match s.next_timer {
                Some(at) if at <= Instant::now() => Due::Timer,
                _ => Due::Nothing,
            },
        }
    }

    /// Records `obj` as handled (`timer_fired`: its timer restarts now).
    pub fn handled(&self, obj: &Arc<K>, timer_fired: bool) {
        let mut seen = self.lock();
        let key = key_of(obj.as_ref());
        let keep_timer = seen
            .get(&key)
            .and_then(|s| s.next_timer)
            .filter(|_| !timer_fired);
        let next_timer = keep_timer.or_else(|| self.every.map(|e| Instant::now() + e));
        seen.insert(
            key,
            Seen {
                obj: obj.clone(),
                essence: essence(obj.as_ref()),
                next_timer,
            },
        );
    }

    /// How long until `obj`'s timer is due (`None` without `every:`).
    pub fn timer_in(&self, obj: &K) -> Option<Duration> {
        let seen = self.lock();
        let at = seen.get(&key_of(obj))?.next_timer?;
        Some(at.saturating_duration_since(Instant::now()))
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
        assert!(matches!(state.due(&first, false), Due::Create));
        state.handled(&first, false);
        let mut finalized = (*cm("2", "x")).clone();
        finalized.metadata.finalizers = Some(vec!["f".into()]);
        assert!(matches!(
            state.due(&Arc::new(finalized), false),
            Due::Nothing
        ));
        match state.due(&cm("3", "y"), false) {
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
            matches!(state.due(&first, true), Due::Nothing),
            "known objects are not re-created"
        );
    }

    #[test]
    fn a_timer_is_due_after_its_period_and_restarts_when_fired() {
        let state = EdgeState::new(Some(Duration::from_millis(20)));
        let obj = cm("1", "x");
        state.handled(&obj, false);
        assert!(matches!(state.due(&obj, false), Due::Nothing));
        std::thread::sleep(Duration::from_millis(25));
        assert!(matches!(state.due(&obj, false), Due::Timer));
        state.handled(&obj, true);
        assert!(matches!(state.due(&obj, false), Due::Nothing));
        let present = std::collections::HashSet::new();
        assert_eq!(state.vanished(&present), vec!["ns/a".to_string()]);
    }
}
