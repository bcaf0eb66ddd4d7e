//! Acceptance tests of the simulated controllers with the real kubectl and kube 5: rollouts that
//! `kubectl rollout status`, `kubectl wait` and `await_condition(is_deployment_completed)` accept,
//! rolling updates, failures on demand (`sim.piceli.dev/behavior`), cascading deletion and one
//! acting controller per shared directory.

mod cluster;
mod deployments;
mod workloads;

use crate::common;

use std::time::{Duration, Instant};

use common::{DEPLOYMENT, Kubectl, eventually, items, json_of};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::{Value, json};

/// One object as JSON, or `None` while it does not exist (yet).
fn get_json(k: &Kubectl, what: &str) -> Option<Value> {
    let out = k.run(&["get", what, "-o", "json"]);
    (out.code == 0).then(|| json_of(&out.stdout))
}

fn crash_looping(deadline: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: broken}}
spec:
  replicas: 1
  progressDeadlineSeconds: {deadline}
  selector: {{matchLabels: {{app: broken}}}}
  template:
    metadata:
      labels: {{app: broken}}
      annotations: {{sim.piceli.dev/behavior: crash-loop}}
    spec:
      containers: [{{name: app, image: 'busybox:1.36'}}]
"
    )
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: 'busybox:1.36'}]
";

/// The pods whose owner is the Job `uid`, and those with no owner left.
fn job_pods(k: &Kubectl, uid: &str) -> (usize, usize) {
    let pods = items(k, "pods");
    let owned = pods
        .iter()
        .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == uid)
        .count();
    let orphans = pods
        .iter()
        .filter(|p| {
            p["metadata"]["ownerReferences"]
                .as_array()
                .is_none_or(|r| r.is_empty())
        })
        .count();
    (owned, orphans)
}
