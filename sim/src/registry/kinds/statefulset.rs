//! StatefulSet (apps/v1): update strategy and retention defaults, selector/template rules, the spec
//! fields an update may not change; its columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_template, set_default};
use crate::registry::rules::workload;
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, containers_images, ready_of};
use crate::registry::table::{AGE, CONTAINERS, Col, IMAGES, Printer};
use crate::status::Cause;

pub struct StatefulSet;

/// The spec fields an update may change.
const UPDATABLE: [&str; 7] = [
    "replicas",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
    "ordinals",
];

impl Strategy for StatefulSet {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        // The status struct as a new object serialises it (its non-`omitempty` counts at zero).
        root.entry("status")
            .or_insert_with(|| json!({"replicas": 0, "availableReplicas": 0}));
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        set_default(spec, "replicas", json!(1));
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "podManagementPolicy", json!("OrderedReady"));
        if let Some(s) = obj(child(spec, "updateStrategy")) {
            set_default(s, "type", json!("RollingUpdate"));
            if s.get("type") == Some(&json!("RollingUpdate"))
                && let Some(ru) = obj(child(s, "rollingUpdate"))
            {
                set_default(ru, "partition", json!(0));
            }
        }
        if let Some(p) = obj(child(spec, "persistentVolumeClaimRetentionPolicy")) {
            set_default(p, "whenDeleted", json!("Retain"));
            set_default(p, "whenScaled", json!("Retain"));
        }
        pod_template(spec);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        workload(object, out);
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        let fixed = |v: &Value| -> Value {
            v.get("spec")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| !UPDATABLE.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .map(Value::Object)
                .unwrap_or(Value::Null)
        };
        if fixed(old) != fixed(new) {
            out.push(Cause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into(),
                field: "spec".into(),
            });
        }
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Ready", "string", 0),
                AGE,
                CONTAINERS,
                IMAGES,
            ],
            cells: |o| {
                let [c, i] = containers_images(o, "/spec/template");
                vec![json!(ready_of(o)), json!(age(o)), c, i]
            },
        })
    }
}
