//! An opt-in record of which RBAC binding allowed each authorized request, by user, verb and resource
//! (tests use it to prove that every rule a role grants is used: [`crate::RunningSim::record_rbac`]).
//! Off by default; while off, authorizing costs one atomic load more.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::attributes::Attributes;

/// One authorized request, as the recorder keeps it (repeats are kept once).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RbacUse {
    /// The authenticated user (`system:serviceaccount:NS:NAME` for a ServiceAccount token).
    pub user: String,
    /// The binding that allowed it, as the apiserver's reason names it: `ClusterRoleBinding "b" of
    /// ClusterRole "r" to …` or `RoleBinding "b/ns" of Role "r" to …`.
    pub allowed_by: String,
    /// The verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, …).
    pub verb: String,
    /// The API group (`""` for the core group).
    pub api_group: String,
    /// The resource with its subresource (`lamps/status`); empty for a non-resource URL.
    pub resource: String,
    /// The request's namespace (`""` for cluster-wide requests).
    pub namespace: String,
}

/// The recorder: [`RbacUsage::start`] turns it on, [`RbacUsage::uses`] reads what it holds.
#[derive(Default)]
pub struct RbacUsage {
    on: AtomicBool,
    uses: Mutex<BTreeSet<RbacUse>>,
}

impl RbacUsage {
    /// Starts recording (what was recorded before is dropped).
    pub fn start(&self) {
        if let Ok(mut uses) = self.uses.lock() {
            uses.clear();
        }
        self.on.store(true, Ordering::SeqCst);
    }

    /// Records an allowed request, when recording; `allowed_by` (the binding that allowed it) is
    /// called only then.
    pub(crate) fn record(&self, a: &Attributes, allowed_by: impl FnOnce() -> String) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let allowed_by = allowed_by();
        let entry = RbacUse {
            user: a.user.name.clone(),
            allowed_by,
            verb: a.verb.clone(),
            api_group: a.group.clone(),
            resource: if a.resource_request {
                a.full_resource()
            } else {
                String::new()
            },
            namespace: a.namespace.clone(),
        };
        if let Ok(mut uses) = self.uses.lock() {
            uses.insert(entry);
        }
    }

    /// Everything recorded since [`RbacUsage::start`], sorted.
    pub fn uses(&self) -> Vec<RbacUse> {
        self.uses
            .lock()
            .map(|u| u.iter().cloned().collect())
            .unwrap_or_default()
    }
}
