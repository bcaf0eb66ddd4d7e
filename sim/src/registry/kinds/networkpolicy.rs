//! NetworkPolicy (networking.k8s.io/v1): `policyTypes` derived from the rules given.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj};
use crate::registry::strategy::Strategy;

pub struct NetworkPolicy;

impl Strategy for NetworkPolicy {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        if let Some(spec) = obj(child(root, "spec"))
            && !spec.contains_key("policyTypes")
        {
            let mut types = vec![json!("Ingress")];
            if spec.contains_key("egress") {
                types.push(json!("Egress"));
            }
            spec.insert("policyTypes".into(), Value::Array(types));
        }
    }
}
