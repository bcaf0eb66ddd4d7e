//! ComponentStatus (v1): kube-apiserver's `componentstatus.REST` is no store — its List probes the
//! control plane's components and reads only the label and field selectors, so `continue`, `limit` and
//! `resourceVersion` are never decoded.

use crate::registry::strategy::Strategy;

pub struct ComponentStatus;

impl Strategy for ComponentStatus {
    fn lists_from_store(&self) -> bool {
        false
    }
}
