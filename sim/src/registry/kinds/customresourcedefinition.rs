//! CustomResourceDefinition (apiextensions.k8s.io/v1): the `Established`/`NamesAccepted` status the
//! server derives.

use serde_json::Value;

use crate::registry::strategy::Strategy;

pub struct CustomResourceDefinition;

impl Strategy for CustomResourceDefinition {
    fn has_generation(&self) -> bool {
        true
    }

    fn derive_status(&self, object: &mut Value) {
        crate::registry::crd::set_status(object);
    }
}
