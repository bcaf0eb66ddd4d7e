//! Job (batch/v1): completion and backoff defaults, the selector on the Job's uid added on create,
//! container rules, and the fields an update may not change.

use serde_json::{Map, Value};

use crate::registry::defaults::{child, job_selector, job_spec, obj};
use crate::registry::rules::{containers, immutable_if_changed};
use crate::registry::strategy::Strategy;
use crate::status::Cause;

pub struct Job;

impl Strategy for Job {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        if let Some(spec) = obj(child(root, "spec")) {
            job_spec(spec);
        }
    }

    fn prepare_create(&self, object: &mut Value) {
        job_selector(object);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        containers(
            &object["spec"]["template"]["spec"],
            "spec.template.spec",
            out,
        );
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        for (ptr, field) in [
            ("/spec/selector", "spec.selector"),
            ("/spec/template", "spec.template"),
            ("/spec/completions", "spec.completions"),
        ] {
            immutable_if_changed(old, new, ptr, field, out);
        }
    }
}
