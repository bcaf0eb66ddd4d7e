//! CronJob (batch/v1): concurrency and history defaults, a required schedule, the job template's
//! container rules.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, job_spec, obj, set_default};
use crate::registry::rules::{containers, required};
use crate::registry::strategy::Strategy;
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
        if let Some(jt) = obj(child(spec, "jobTemplate"))
            && let Some(js) = obj(child(jt, "spec"))
        {
            job_spec(js);
        }
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
}
