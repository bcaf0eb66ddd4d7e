//! CronJob (batch/v1): concurrency and history defaults, a required schedule, the job template's
//! container rules; its columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_template, set_default, template_metadata};
use crate::registry::rules::{containers, required};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, containers_images, or_none, s, selector_text, since};
use crate::registry::table::{AGE, CONTAINERS, Col, IMAGES, Printer, SELECTOR};
use crate::status::Cause;

pub struct CronJob;

impl Strategy for CronJob {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        set_default(spec, "concurrencyPolicy", json!("Allow"));
        set_default(spec, "suspend", json!(false));
        set_default(spec, "successfulJobsHistoryLimit", json!(3));
        set_default(spec, "failedJobsHistoryLimit", json!(1));
        // Only the pod template of the job template is defaulted (the Job's own defaults come when
        // a Job is made from it), as `SetDefaults_CronJob`.
        if let Some(jt) = obj(child(spec, "jobTemplate")) {
            template_metadata(jt);
            if let Some(js) = obj(child(jt, "spec")) {
                pod_template(js);
            }
        }
        root.entry("status").or_insert_with(|| json!({}));
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        if object
            .pointer("/spec/schedule")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            out.push(required("spec.schedule"));
        }
        containers(
            &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
            "spec.jobTemplate.spec.template.spec",
            out,
        );
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Schedule", "string", 0),
                Col("Timezone", "string", 0),
                Col("Suspend", "boolean", 0),
                Col("Active", "integer", 0),
                Col("Last Schedule", "string", 0),
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
    let suspend = match o.pointer("/spec/suspend").and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let active = o
        .pointer("/status/active")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let last = match o.pointer("/status/lastScheduleTime") {
        Some(t @ Value::String(_)) => since(Some(t)),
        _ => "<none>".into(),
    };
    let [c, i] = containers_images(o, "/spec/jobTemplate/spec/template");
    vec![
        json!(s(o, "/spec/schedule")),
        json!(or_none(s(o, "/spec/timeZone"))),
        json!(suspend),
        json!(active),
        json!(last),
        json!(age(o)),
        c,
        i,
        json!(selector_text(o.pointer("/spec/jobTemplate/spec/selector"))),
    ]
}
