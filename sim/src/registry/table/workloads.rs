//! Table printers of the workload kinds (apps/v1, batch/v1), with kube-apiserver 1.33's columns;
//! the Containers, Images and Selector columns are priority 1 (`kubectl get -o wide`).

use serde_json::{Value, json};

use super::cells::{age, containers_images, labels_text, n, or_none, s, selector_text, since};
use super::{Col, Printer};
use crate::time::{human_age, now_secs, parse_rfc3339};

const AGE: Col = Col("Age", "string", 0);
const CONTAINERS: Col = Col("Containers", "string", 1);
const IMAGES: Col = Col("Images", "string", 1);
const SELECTOR: Col = Col("Selector", "string", 1);

/// The printer of a workload kind.
pub fn printer(kind: &str) -> Option<Printer> {
    Some(match kind {
        "Deployment" => Printer {
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
        },
        "StatefulSet" => Printer {
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
        },
        "ReplicaSet" => Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Desired", "integer", 0),
                Col("Current", "integer", 0),
                Col("Ready", "integer", 0),
                AGE,
                CONTAINERS,
                IMAGES,
                SELECTOR,
            ],
            cells: |o| {
                let [c, i] = containers_images(o, "/spec/template");
                vec![
                    json!(n(o, "/spec/replicas")),
                    json!(n(o, "/status/replicas")),
                    json!(n(o, "/status/readyReplicas")),
                    json!(age(o)),
                    c,
                    i,
                    json!(selector_text(o.pointer("/spec/selector"))),
                ]
            },
        },
        "DaemonSet" => Printer {
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
        },
        "Job" => Printer {
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
            cells: job,
        },
        "CronJob" => Printer {
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
            cells: cronjob,
        },
        _ => return None,
    })
}

fn ready_of(o: &Value) -> String {
    format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        n(o, "/spec/replicas")
    )
}

fn has_condition(o: &Value, ty: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == ty && c["status"] == "True")
}

fn job(o: &Value) -> Vec<Value> {
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

fn cronjob(o: &Value) -> Vec<Value> {
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
