//! Jobs whose immutable fields change: a Job's pod template (its image, env, …), selector, completions and
//! a few more cannot be changed in place — the API server refuses the update — so a plan replaces the
//! Job instead: apply deletes the live one (its pods with it) and creates the new one. Only a finished
//! Job (condition `Complete` or `Failed`) is replaced; a running one is refused at plan time
//! ([`EngineError::JobRunning`](super::EngineError::JobRunning)), since deleting it would kill its pods
//! mid-run. Only what the app itself applied is compared (its managed fields, read back with
//! [`super::owned::applied`]): what the server defaulted or controllers added never causes a replace.
//!
//! CronJobs are not concerned: their `jobTemplate` is mutable (it applies to the next Jobs they start).

use super::diff::{Change, diff};
use serde_json::Value;

/// The Job spec fields an update may not change (Kubernetes 1.33, `ValidateJobSpecUpdate`), as JSON
/// pointers. `completions` may change for an Indexed Job together with `parallelism` (elastic Indexed
/// Jobs), which [`decide`] allows.
pub const JOB_IMMUTABLE: &[&str] = &[
    "/spec/template",
    "/spec/selector",
    "/spec/completions",
    "/spec/completionMode",
    "/spec/podFailurePolicy",
    "/spec/backoffLimitPerIndex",
    "/spec/managedBy",
    "/spec/successPolicy",
];

/// What planning does with an object that exists and is the app's.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Updated in place as usual (not a Job, no immutable field changed, or the applied fields cannot be
    /// read — then the dry run has the last word).
    InPlace,
    /// A finished Job whose immutable fields change: deleted and created again.
    Replace {
        /// The changed immutable fields (`spec.template`, …).
        fields: Vec<String>,
        /// What the app applied before → what it applies now.
        diff: Vec<Change>,
    },
    /// A Job still running whose immutable fields change: refused.
    Running {
        /// The changed immutable fields.
        fields: Vec<String>,
    },
}

/// Whether an object is a Job (`batch/*`).
pub fn is_job(object: &Value) -> bool {
    object["kind"] == "Job"
        && object["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("batch/"))
}

/// Whether a Job has finished: a `Complete` or `Failed` condition that is `True` (the API server's
/// `IsJobFinished`).
pub fn finished(live: &Value) -> bool {
    live["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
}

/// The reason a plan shows for a replace.
pub fn reason(fields: &[String]) -> String {
    let (what, verb) = if fields.len() == 1 {
        (fields[0].clone(), "is")
    } else {
        (fields.join(", "), "are")
    };
    format!(
        "Job {what} {verb} immutable: the finished Job is deleted (its pods with it) and created again"
    )
}

/// Decide for a desired object and the live object of the same name, which this app owns (`manager` is
/// its field manager).
pub fn decide(desired: &Value, live: &Value, manager: &str) -> Decision {
    if !is_job(desired) || !is_job(live) {
        return Decision::InPlace;
    }
    let Some(applied) = super::owned::applied(live, manager) else {
        return Decision::InPlace;
    };
    let mut changed = super::owned::changed_under(desired, &applied, JOB_IMMUTABLE);
    if elastic_completions(desired, live) {
        changed.retain(|p| *p != "/spec/completions");
    }
    if changed.is_empty() {
        return Decision::InPlace;
    }
    let fields: Vec<String> = changed
        .iter()
        .map(|p| p.trim_start_matches('/').replace('/', "."))
        .collect();
    if !finished(live) {
        return Decision::Running { fields };
    }
    // What was applied, with the identity the projection leaves out, against what is applied now.
    let mut before = applied;
    if let Some(map) = before.as_object_mut() {
        for key in ["apiVersion", "kind"] {
            if let Some(v) = desired.get(key) {
                map.insert(key.into(), v.clone());
            }
        }
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(meta) = meta.as_object_mut() {
            for key in ["name", "namespace"] {
                if let Some(v) = desired["metadata"].get(key) {
                    meta.insert(key.into(), v.clone());
                }
            }
        }
    }
    Decision::Replace {
        fields,
        diff: diff(&before, desired),
    }
}

/// An Indexed Job whose `completions` change together with `parallelism` (to the same value): allowed in
/// place since Kubernetes 1.27 (elastic Indexed Jobs).
fn elastic_completions(desired: &Value, live: &Value) -> bool {
    let indexed = |o: &Value| o["spec"]["completionMode"] == "Indexed";
    indexed(desired)
        && indexed(live)
        && desired["spec"]["completions"].is_i64()
        && desired["spec"]["completions"] == desired["spec"]["parallelism"]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MANAGER: &str = "piceli";

    fn desired(image: &str) -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "shop",
                         "labels": {"app.kubernetes.io/managed-by": "piceli", "app.kubernetes.io/name": "shop"}},
            "spec": {"backoffLimit": 2, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "migrate", "image": image, "args": ["up"]}]
            }}}
        })
    }

    /// The Job as the server keeps it after the app applied `desired(image)`: defaults, the selector and
    /// labels the server adds, the managed fields of the apply, and `conditions` as status.
    fn live(image: &str, conditions: Value) -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {
                "name": "migrate", "namespace": "shop", "uid": "u1", "resourceVersion": "9",
                "labels": {"app.kubernetes.io/managed-by": "piceli", "app.kubernetes.io/name": "shop"},
                "managedFields": [
                    {"manager": "piceli", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}, "f:app.kubernetes.io/name": {}}},
                        "f:spec": {"f:backoffLimit": {}, "f:template": {"f:spec": {
                            "f:restartPolicy": {},
                            "f:containers": {"k:{\"name\":\"migrate\"}": {
                                ".": {}, "f:name": {}, "f:image": {}, "f:args": {}
                            }}
                        }}}
                    }},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}
                ]
            },
            "spec": {
                "backoffLimit": 2, "completions": 1, "parallelism": 1, "completionMode": "NonIndexed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
                "template": {
                    "metadata": {"labels": {"batch.kubernetes.io/controller-uid": "u1", "job-name": "migrate"}},
                    "spec": {
                        "restartPolicy": "Never", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
                        "containers": [{"name": "migrate", "image": image, "args": ["up"],
                                        "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"}]
                    }
                }
            },
            "status": {"conditions": conditions}
        })
    }

    fn complete() -> Value {
        json!([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}])
    }

    #[test]
    fn a_finished_job_whose_template_changed_is_replaced_with_the_change_shown() {
        let Decision::Replace { fields, diff } =
            decide(&desired("db:2"), &live("db:1", complete()), MANAGER)
        else {
            panic!("a replace expected");
        };
        assert_eq!(fields, ["spec.template"]);
        assert_eq!(diff.len(), 1, "{diff:?}");
        assert_eq!(diff[0].path, "spec.template.spec.containers[migrate].image");
        assert_eq!(diff[0].before, Some(json!("db:1")));
        assert_eq!(diff[0].after, Some(json!("db:2")));
        assert_eq!(
            reason(&fields),
            "Job spec.template is immutable: the finished Job is deleted (its pods with it) and created again"
        );
        let failed =
            json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]);
        assert!(matches!(
            decide(&desired("db:2"), &live("db:1", failed), MANAGER),
            Decision::Replace { .. }
        ));
    }

    #[test]
    fn an_unchanged_job_stays_in_place_whatever_the_server_defaulted() {
        // The live Job has defaults, a selector and template labels the app never set: no replace.
        assert_eq!(
            decide(&desired("db:1"), &live("db:1", complete()), MANAGER),
            Decision::InPlace
        );
        // A mutable field only (backoffLimit): an ordinary update.
        let mut d = desired("db:1");
        d["spec"]["backoffLimit"] = json!(5);
        assert_eq!(
            decide(&d, &live("db:1", complete()), MANAGER),
            Decision::InPlace
        );
    }

    #[test]
    fn a_field_the_app_stops_setting_in_the_template_is_a_change() {
        let mut d = desired("db:1");
        d["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .expect("container")
            .remove("args");
        let Decision::Replace { diff, .. } = decide(&d, &live("db:1", complete()), MANAGER) else {
            panic!("a replace expected");
        };
        assert_eq!(diff[0].path, "spec.template.spec.containers[migrate].args");
        assert_eq!(diff[0].after, None);
    }

    #[test]
    fn a_running_job_whose_template_changed_is_refused() {
        for conditions in [json!([]), json!([{"type": "Complete", "status": "False"}])] {
            assert_eq!(
                decide(&desired("db:2"), &live("db:1", conditions), MANAGER),
                Decision::Running {
                    fields: vec!["spec.template".into()]
                }
            );
        }
    }

    #[test]
    fn not_the_apps_fields_or_not_a_job_is_never_replaced() {
        // Applied by another manager: nothing of it is the app's to compare (planning refuses a Job that
        // is not the app's before it gets here; this is the second line).
        assert_eq!(
            decide(&desired("db:2"), &live("db:1", complete()), "someone-else"),
            Decision::InPlace
        );
        let mut cron = desired("db:2");
        cron["kind"] = json!("CronJob");
        let mut live_cron = live("db:1", complete());
        live_cron["kind"] = json!("CronJob");
        assert_eq!(decide(&cron, &live_cron, MANAGER), Decision::InPlace);
    }

    #[test]
    fn elastic_indexed_completions_change_in_place() {
        let mut d = desired("db:1");
        d["spec"]["completionMode"] = json!("Indexed");
        d["spec"]["completions"] = json!(4);
        d["spec"]["parallelism"] = json!(4);
        let mut l = live("db:1", complete());
        l["spec"]["completionMode"] = json!("Indexed");
        l["spec"]["completions"] = json!(2);
        l["spec"]["parallelism"] = json!(2);
        let fields = &mut l["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
        for f in ["f:completionMode", "f:completions", "f:parallelism"] {
            fields[f] = json!({});
        }
        assert_eq!(decide(&d, &l, MANAGER), Decision::InPlace);
        d["spec"]["parallelism"] = json!(3);
        assert_eq!(
            decide(&d, &l, MANAGER),
            Decision::Replace {
                fields: vec!["spec.completions".into()],
                diff: diff(
                    &json!({"spec": {"completions": 2, "parallelism": 2}}),
                    &json!({"spec": {"completions": 4, "parallelism": 3}})
                ),
            }
        );
    }
}
