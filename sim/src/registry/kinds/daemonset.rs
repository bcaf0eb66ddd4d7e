//! DaemonSet (apps/v1): update strategy defaults, selector/template rules, immutable selector; its
//! columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_template, set_default};
use crate::registry::rules::{immutable_if_changed, workload};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{
    age, containers_images, labels_text, n, or_none, selector_text,
};
use crate::registry::table::{AGE, CONTAINERS, Col, IMAGES, Printer, SELECTOR};
use crate::status::Cause;

pub struct DaemonSet;

impl Strategy for DaemonSet {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        // The status struct as a new object serialises it (its non-`omitempty` counts at zero).
        root.entry("status").or_insert_with(|| json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}));
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        set_default(spec, "revisionHistoryLimit", json!(10));
        if let Some(s) = obj(child(spec, "updateStrategy")) {
            set_default(s, "type", json!("RollingUpdate"));
            if s.get("type") == Some(&json!("RollingUpdate"))
                && let Some(ru) = obj(child(s, "rollingUpdate"))
            {
                set_default(ru, "maxUnavailable", json!(1));
                set_default(ru, "maxSurge", json!(0));
            }
        }
        pod_template(spec);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        workload(object, out);
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        immutable_if_changed(old, new, "/spec/selector", "spec.selector", out);
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Desired", "integer", 0),
                Col("Current", "integer", 0),
                Col("Ready", "integer", 0),
                Col("Up-to-date", "integer", 0),
                Col("Available", "integer", 0),
                Col("Node Selector", "string", 0),
                AGE,
                CONTAINERS,
                IMAGES,
                SELECTOR,
            ],
            cells: |o| {
                let [c, i] = containers_images(o, "/spec/template");
                vec![
                    json!(n(o, "/status/desiredNumberScheduled")),
                    json!(n(o, "/status/currentNumberScheduled")),
                    json!(n(o, "/status/numberReady")),
                    json!(n(o, "/status/updatedNumberScheduled")),
                    json!(n(o, "/status/numberAvailable")),
                    json!(or_none(labels_text(
                        o.pointer("/spec/template/spec/nodeSelector")
                    ))),
                    json!(age(o)),
                    c,
                    i,
                    json!(selector_text(o.pointer("/spec/selector"))),
                ]
            },
        })
    }
}
