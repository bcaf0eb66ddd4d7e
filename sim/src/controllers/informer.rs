//! The controllers' shared informer cache: every kind's objects parsed once per change of that kind
//! (as client-go informers keep a parsed copy that watch events refresh), not once per controller
//! per turn. A list is current while the event hub has published no change of its store key since
//! it was read; the stamp is read before the store, so a write racing the read only makes the next
//! use re-read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::storage::Store;

/// A kind's objects with the hub's last change of its store key when they were read.
type Stamped = (u64, Arc<[Value]>);

/// Parsed lists by store key.
#[derive(Default)]
pub struct Informers {
    lists: Mutex<HashMap<String, Stamped>>,
    reads: AtomicU64,
}

impl Informers {
    /// Every object stored under `rk`, from the cache while nothing of that kind changed.
    pub fn list(&self, store: &Store, rk: &str) -> Arc<[Value]> {
        let stamp = store.hub().last_change(rk);
        if let Ok(lists) = self.lists.lock()
            && let Some((at, items)) = lists.get(rk)
            && *at == stamp
        {
            return items.clone();
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let items: Arc<[Value]> = store
            .list(rk, None, None)
            .map(|(items, _)| items.into_iter().map(|s| s.object).collect())
            .unwrap_or_default();
        if let Ok(mut lists) = self.lists.lock() {
            lists.insert(rk.to_string(), (stamp, items.clone()));
        }
        items
    }

    /// How many lists were read (and parsed) from the store rather than served from the cache.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_read_again_only_after_it_changed() {
        let store = Store::open(None).expect("in-memory store");
        let informers = Informers::default();
        let put = |name: &str| {
            store
                .write(|w| {
                    let rv = w.next_rv()?;
                    let obj = serde_json::json!({"metadata": {"name": name}});
                    let added = crate::storage::EventType::Added;
                    w.put("/configmaps", "default", name, rv, obj, added)?;
                    Ok(())
                })
                .expect("write");
        };
        put("a");
        assert_eq!(informers.list(&store, "/configmaps").len(), 1);
        assert_eq!(informers.list(&store, "/configmaps").len(), 1);
        assert_eq!(informers.list(&store, "/secrets").len(), 0);
        assert_eq!(informers.reads(), 2, "the second list came from the cache");
        put("b");
        assert_eq!(informers.list(&store, "/configmaps").len(), 2);
        assert_eq!(informers.list(&store, "/secrets").len(), 0);
        assert_eq!(informers.reads(), 3, "only the changed kind was read again");
    }
}
