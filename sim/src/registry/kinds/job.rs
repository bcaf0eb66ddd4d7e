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

    /// `ValidateJobSpecUpdate` (1.33): completions (but for elastic Indexed Jobs), selector, template,
    /// completionMode, podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy cannot change.
    /// (The scheduling directives a suspended Job that never started may change are not simulated.)
    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        let indexed = new.pointer("/spec/completionMode") == Some(&Value::from("Indexed"));
        let completions = new.pointer("/spec/completions");
        if indexed && old.pointer("/spec/completions") != completions {
            // Elastic Indexed Jobs: completions may change, in tandem with parallelism.
            if let Some(c) = completions.filter(|c| !c.is_null())
                && Some(c) != new.pointer("/spec/parallelism")
            {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {c}: can only be modified in tandem with spec.parallelism"
                    ),
                    field: "spec.completions".into(),
                });
            }
        } else {
            immutable_if_changed(old, new, "/spec/completions", "spec.completions", out);
        }
        for (ptr, field) in [
            ("/spec/selector", "spec.selector"),
            ("/spec/template", "spec.template"),
            ("/spec/completionMode", "spec.completionMode"),
            ("/spec/podFailurePolicy", "spec.podFailurePolicy"),
            ("/spec/backoffLimitPerIndex", "spec.backoffLimitPerIndex"),
            ("/spec/managedBy", "spec.managedBy"),
            ("/spec/successPolicy", "spec.successPolicy"),
        ] {
            immutable_if_changed(old, new, ptr, field, out);
        }
    }
}
