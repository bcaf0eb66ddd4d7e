//! Deployment (apps/v1): strategy and history defaults, selector/template rules, immutable selector;
//! its columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_template, set_default};
use crate::registry::rules::{immutable_if_changed, workload};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, containers_images, n, ready_of, selector_text};
use crate::registry::table::{AGE, CONTAINERS, Col, IMAGES, Printer, SELECTOR};
use crate::status::Cause;

pub struct Deployment;

impl Strategy for Deployment {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        // The status struct as a new object serialises it (its non-`omitempty` counts at zero).
        root.entry("status").or_insert_with(|| json!({}));
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        set_default(spec, "replicas", json!(1));
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "progressDeadlineSeconds", json!(600));
        if let Some(s) = obj(child(spec, "strategy")) {
            set_default(s, "type", json!("RollingUpdate"));
            if s.get("type") == Some(&json!("RollingUpdate"))
                && let Some(ru) = obj(child(s, "rollingUpdate"))
            {
                set_default(ru, "maxUnavailable", json!("25%"));
                set_default(ru, "maxSurge", json!("25%"));
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
                Col("Ready", "string", 0),
                Col("Up-to-date", "integer", 0),
                Col("Available", "integer", 0),
                AGE,
                CONTAINERS,
                IMAGES,
                SELECTOR,
            ],
            cells: |o| {
                let [c, i] = containers_images(o, "/spec/template");
                vec![
                    json!(ready_of(o)),
                    json!(n(o, "/status/updatedReplicas")),
                    json!(n(o, "/status/availableReplicas")),
                    json!(age(o)),
                    c,
                    i,
                    json!(selector_text(o.pointer("/spec/selector"))),
                ]
            },
        })
    }
}
