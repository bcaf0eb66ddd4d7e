//! Pod (v1): pod spec defaults, the initial `Pending` status and QoS class, container rules.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_spec, set_default};
use crate::registry::rules::containers;
use crate::registry::strategy::Strategy;
use crate::status::Cause;

pub struct Pod;

impl Strategy for Pod {
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        pod_spec(spec);
        set_default(spec, "enableServiceLinks", json!(true));
        set_default(spec, "serviceAccountName", json!("default"));
        set_default(spec, "priority", json!(0));
        set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    }

    fn prepare_create(&self, object: &mut Value) {
        crate::kubelet::pod_status::on_create(object);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        containers(&object["spec"], "spec", out);
    }
}
