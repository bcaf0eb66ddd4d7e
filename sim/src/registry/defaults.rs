//! Defaulting helpers shared by the kinds' strategies (pod templates, containers, Job specs);
//! `per_kind.rs` runs a kind's defaults.

use serde_json::{Map, Value, json};

pub(crate) fn obj(v: &mut Value) -> Option<&mut Map<String, Value>> {
    v.as_object_mut()
}

pub(crate) fn set_default(m: &mut Map<String, Value>, key: &str, value: Value) {
    if !m.contains_key(key) || m.get(key) == Some(&Value::Null) {
        m.insert(key.to_string(), value);
    }
}

pub(crate) fn child<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Value {
    m.entry(key.to_string()).or_insert_with(|| json!({}))
}

/// What the Job strategy adds when a Job is created without `manualSelector`: a selector on the Job's
/// uid and the matching pod template labels.
pub fn job_selector(job: &mut Value) {
    add_job_selector(job);
    // `SetDefaults_Job`: a Job without labels takes its pod template's (kube-apiserver defaults the
    // stored Job again when it reads it, after the selector's labels were added).
    let template_labels = job.pointer("/spec/template/metadata/labels").cloned();
    if let (Some(labels), Some(meta)) = (template_labels, job.get_mut("metadata").and_then(obj)) {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            meta.insert("labels".into(), labels);
        }
    }
}

fn add_job_selector(job: &mut Value) {
    let uid = job.pointer("/metadata/uid").cloned().unwrap_or(Value::Null);
    let name = job
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(spec) = job.get_mut("spec").and_then(obj) else {
        return;
    };
    if spec.get("manualSelector") == Some(&json!(true)) || spec.contains_key("selector") {
        return;
    }
    spec.insert(
        "selector".into(),
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
    let Some(template) = obj(child(spec, "template")) else {
        return;
    };
    let Some(meta) = obj(child(template, "metadata")) else {
        return;
    };
    if let Some(labels) = obj(child(meta, "labels")) {
        labels.insert("batch.kubernetes.io/controller-uid".into(), uid.clone());
        labels.insert("batch.kubernetes.io/job-name".into(), name.clone());
        labels.insert("controller-uid".into(), uid);
        labels.insert("job-name".into(), name);
    }
}

pub(crate) fn job_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "parallelism", json!(1));
    set_default(spec, "completions", json!(1));
    set_default(spec, "backoffLimit", json!(6));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "manualSelector", json!(false));
    set_default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    pod_template(spec);
}

pub(crate) fn pod_template(spec: &mut Map<String, Value>) {
    let Some(template) = obj(child(spec, "template")) else {
        return;
    };
    template_metadata(template);
    if let Some(ps) = obj(child(template, "spec")) {
        pod_spec(ps);
    }
}

/// The metadata of a template (a pod template, a CronJob's job template) as kube-apiserver 1.33 writes
/// it: an `ObjectMeta` struct nested by value, so always present and with `creationTimestamp: null`.
pub(crate) fn template_metadata(template: &mut Map<String, Value>) {
    if let Some(meta) = obj(child(template, "metadata")) {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
}

pub(crate) fn pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = spec.get_mut(list) {
            for c in cs.iter_mut().filter_map(obj) {
                container(c);
            }
        }
    }
}

fn container(c: &mut Map<String, Value>) {
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let last = image.rsplit('/').next().unwrap_or("");
    let tag_latest = !image.contains('@') && (!last.contains(':') || last.ends_with(":latest"));
    set_default(
        c,
        "imagePullPolicy",
        json!(if tag_latest { "Always" } else { "IfNotPresent" }),
    );
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    set_default(c, "resources", json!({}));
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(obj) {
            set_default(p, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(obj) {
            set_default(p, "timeoutSeconds", json!(1));
            set_default(p, "periodSeconds", json!(10));
            set_default(p, "successThreshold", json!(1));
            set_default(p, "failureThreshold", json!(3));
        }
    }
}
