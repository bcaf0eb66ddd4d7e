//! Job (batch/v1): completion and backoff defaults, the selector on the Job's uid added on create,
//! container rules, the fields an update may not change; its columns, and a DELETE naming no policy
//! orphans its pods.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, job_selector, job_spec, obj};
use crate::registry::rules::{containers, immutable_if_changed};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, containers_images, n, selector_text};
use crate::registry::table::{AGE, CONTAINERS, Col, IMAGES, Printer, SELECTOR};
use crate::status::Cause;
use crate::time::{human_age, now_secs, parse_rfc3339};

pub struct Job;

impl Strategy for Job {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        // The status struct as a new object serialises it (its non-`omitempty` counts at zero).
        root.entry("status").or_insert_with(|| json!({}));
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

    /// batch/v1 keeps orphaning a Job's pods when the request names no policy (backwards
    /// compatibility).
    fn orphans_by_default(&self, version: &str) -> bool {
        version == "v1"
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Status", "string", 0),
                Col("Completions", "string", 0),
                Col("Duration", "string", 0),
                AGE,
                CONTAINERS,
                IMAGES,
                SELECTOR,
            ],
            cells,
        })
    }
}

fn cells(o: &Value) -> Vec<Value> {
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let succeeded = n(o, "/status/succeeded");
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match n(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let time = |p: &str| o.pointer(p).and_then(Value::as_str).and_then(parse_rfc3339);
    let duration = match (time("/status/startTime"), time("/status/completionTime")) {
        (None, _) => String::new(),
        (Some(start), None) => human_age(now_secs() - start),
        (Some(start), Some(end)) => human_age(end - start),
    };
    let [c, i] = containers_images(o, "/spec/template");
    vec![
        json!(status),
        json!(completions),
        json!(duration),
        json!(age(o)),
        c,
        i,
        json!(selector_text(o.pointer("/spec/selector"))),
    ]
}

fn has_condition(o: &Value, ty: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == ty && c["status"] == "True")
}
