//! Objects whose immutable fields change: the API server refuses to change such a field in place (a
//! Deployment's selector, a StatefulSet's volumeClaimTemplates, a finished Job's pod template, a ConfigMap
//! marked `immutable: true`, …; the table is [`super::immutable::RULES`]), so a plan replaces the object
//! instead: apply deletes the live one — with the propagation its kind needs ([`propagation`]) — and
//! creates the new one. The plan says which field and why (the action's `reason`), and the replace is
//! part of the approved plan like any other change.
//!
//! Some objects are never replaced: a Job still running (its pods would be killed mid-run,
//! [`EngineError::JobRunning`](super::EngineError::JobRunning)), and the kinds that hold data or everything
//! in them ([`super::immutable::NEVER_REPLACED`]: PersistentVolumeClaims, Namespaces, …,
//! [`EngineError::ImmutableData`](super::EngineError::ImmutableData)). Only what the app itself applied is
//! compared (its managed fields, read back with [`super::owned::applied`]): what the server defaulted or
//! controllers added never causes a replace.
//!
//! CronJobs are not concerned: their `jobTemplate` is mutable (it applies to the next Jobs they start).

use super::diff::{Change, diff};
use super::immutable::{self, NEVER_REPLACED};
use serde::{Deserialize, Serialize};
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

/// How the delete half of a replace treats the object's dependents (the API's `propagationPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Propagation {
    /// Dependents are deleted by the garbage collector after the object is gone.
    Background,
    /// Dependents stay, without the owner reference (a StatefulSet's pods and claims).
    Orphan,
}

impl Propagation {
    /// The API's name (`Background`, `Orphan`).
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Background => "Background",
            Propagation::Orphan => "Orphan",
        }
    }
}

/// How an object of `kind` is deleted to be replaced: a StatefulSet with `Orphan` (its pods and
/// PersistentVolumeClaims stay, and the new StatefulSet adopts the pods), everything else `Background`
/// (a Job's finished pods, a Deployment's ReplicaSets go with it; without a policy batch/v1 would orphan a
/// Job's pods).
pub fn propagation(kind: &str) -> Propagation {
    match kind {
        "StatefulSet" => Propagation::Orphan,
        _ => Propagation::Background,
    }
}

/// What planning does with an object that exists and is the app's.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Updated in place as usual (no immutable field changed, or the applied fields cannot be read —
    /// then the dry run has the last word).
    InPlace,
    /// Immutable fields change: deleted and created again.
    Replace {
        /// The changed immutable fields (`spec.template`, …).
        fields: Vec<String>,
        /// What the app applied before → what it applies now.
        diff: Vec<Change>,
        /// How the old object is deleted.
        propagation: Propagation,
    },
    /// A Job still running whose immutable fields change: refused.
    Running {
        /// The changed immutable fields.
        fields: Vec<String>,
    },
    /// An object of a kind that is never replaced (it holds data) whose immutable fields change: refused.
    Refused {
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

/// The reason a plan shows for a replace of a `kind` object whose `fields` change (printed after
/// `because`): which fields, why, how the old object is deleted, and how to keep the live value instead.
pub fn reason(kind: &str, fields: &[String], propagation: Propagation) -> String {
    let (what, verb) = match fields {
        [] => ("a field".to_string(), "is"),
        [one] => (one.clone(), "is"),
        many => (many.join(", "), "are"),
    };
    let how = match (kind, propagation) {
        ("Job", _) => {
            return format!(
                "Job {what} {verb} immutable: the finished Job is deleted (its pods with \
                 it) and created again"
            );
        }
        ("StatefulSet", Propagation::Orphan) => {
            let mut how = "the StatefulSet is deleted with propagation Orphan (its pods and \
                           PersistentVolumeClaims stay; the new StatefulSet adopts the pods its selector \
                           matches) and created again"
                .to_string();
            if fields.iter().any(|f| f == "spec.selector") {
                how.push_str(
                    "; pods the new selector does not match keep running unowned: delete them once the \
                     new ones are ready",
                );
            }
            how
        }
        ("Deployment" | "ReplicaSet", _) => format!(
            "the {kind} is deleted with propagation {} (its ReplicaSets and pods with it) and created \
             again: its pods are replaced without overlap",
            propagation.as_str()
        ),
        ("DaemonSet", _) => format!(
            "the DaemonSet is deleted with propagation {} (its pods with it) and created again: its pods \
             are replaced without overlap",
            propagation.as_str()
        ),
        ("ConfigMap" | "Secret", _) => format!(
            "the {kind} is deleted and created again (pods that use it see the new values once they \
             restart)"
        ),
        ("Service", _) => {
            "the Service is deleted and created again (it gets a new cluster IP unless `clusterIP` is set)"
                .to_string()
        }
        _ => format!(
            "the {kind} is deleted with propagation {} and created again",
            propagation.as_str()
        ),
    };
    let keep = if fields.iter().any(|f| f.ends_with("selector")) {
        "`spec: { selector: … }`"
    } else {
        "`spec: { … }`, or the item's own key"
    };
    format!(
        "{kind} {what} {verb} immutable: {how}. To keep the live value instead, write it \
         in `app!` ({keep}; `kubectl get -o yaml` shows it) and plan again"
    )
}

/// Decide for a desired object and the live object of the same name, which this app owns (`manager` is
/// its field manager), from the table of immutable fields.
pub fn decide(desired: &Value, live: &Value, manager: &str) -> Decision {
    if !immutable::has_rules(desired) {
        return Decision::InPlace;
    }
    // What the app applied, projected under the rules' paths only (most of a workload, its pod template,
    // is never compared).
    let paths = if is_job(desired) {
        JOB_IMMUTABLE.to_vec()
    } else {
        immutable::paths(desired)
    };
    let Some(applied) = super::owned::applied_under(live, manager, &paths) else {
        return Decision::InPlace;
    };
    let mut fields: Vec<String> = if is_job(desired) {
        // The Job's own comparison: what the app applied, exactly (its template is not atomic).
        super::owned::changed_under(desired, &applied, JOB_IMMUTABLE)
            .into_iter()
            .map(immutable::dotted)
            .collect()
    } else {
        immutable::changed(desired, live, &applied)
            .into_iter()
            .map(|f| f.field)
            .collect()
    };
    if is_job(desired) && elastic_completions(desired, live) {
        fields.retain(|p| p != "spec.completions");
    }
    if fields.is_empty() {
        return Decision::InPlace;
    }
    // A replace (rare): the diff shows the whole of what was applied.
    decide_for(
        desired,
        live,
        fields,
        super::owned::applied(live, manager).or(Some(applied)),
    )
}

/// The decision for an object whose immutable `fields` change (found by the table, or named by the
/// server's refusal of a dry run); `applied` is what the app last applied, when known (the diff shows it
/// against the desired object; else the live object).
pub fn decide_for(
    desired: &Value,
    live: &Value,
    fields: Vec<String>,
    applied: Option<Value>,
) -> Decision {
    let kind = desired["kind"].as_str().unwrap_or_default();
    if NEVER_REPLACED.contains(&kind) {
        return Decision::Refused { fields };
    }
    if is_job(desired) && !finished(live) {
        return Decision::Running { fields };
    }
    // What was applied, with the identity the projection leaves out, against what is applied now.
    let mut before = applied.unwrap_or_else(|| super::diff::normalize(live));
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
        propagation: propagation(kind),
    }
}

/// The plan's diff for a replace: the live object against the object the server would create (its
/// dry-run create), so what the server defaults on both sides is no difference and what the old object
/// had that the new one will not (another manager's fields, an allocated IP) shows. The values only the
/// server derives from each object's identity (uids in a Job's labels, a Deployment's revision) are left
/// out.
pub fn replacement_diff(live: &Value, created: &Value, name: &str) -> Vec<Change> {
    let mut created = created.clone();
    if let Some(meta) = created.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("generateName");
        meta.insert("name".into(), Value::String(name.to_string()));
    }
    let uids: Vec<&str> = [live, &created]
        .iter()
        .filter_map(|o| o["metadata"]["uid"].as_str())
        .collect();
    diff(&without_server_annotations(live), &created)
        .into_iter()
        .filter(|c| {
            let derived = |v: &Option<Value>| {
                v.as_ref()
                    .and_then(Value::as_str)
                    .is_some_and(|s| uids.contains(&s))
            };
            !derived(&c.before) && !derived(&c.after)
        })
        .collect()
}

/// `live` without [`SERVER_ANNOTATIONS`] (and without annotations when none is left).
fn without_server_annotations(live: &Value) -> std::borrow::Cow<'_, Value> {
    let notes = live["metadata"]["annotations"].as_object();
    if !notes.is_some_and(|n| SERVER_ANNOTATIONS.iter().any(|a| n.contains_key(*a))) {
        return std::borrow::Cow::Borrowed(live);
    }
    let mut out = live.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        let empty = match meta.get_mut("annotations").and_then(Value::as_object_mut) {
            Some(notes) => {
                for a in SERVER_ANNOTATIONS {
                    notes.remove(*a);
                }
                notes.is_empty()
            }
            None => false,
        };
        if empty {
            meta.remove("annotations");
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Annotations the server or its controllers write on every object of a kind.
const SERVER_ANNOTATIONS: &[&str] = &["deployment.kubernetes.io/revision"];

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
        let Decision::Replace { fields, diff, .. } =
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
            reason("Job", &fields, Propagation::Background),
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
    fn the_replacement_diff_leaves_out_what_the_server_derives_from_identity() {
        let live = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "uid": "old-uid", "resourceVersion": "4",
                         "annotations": {"deployment.kubernetes.io/revision": "3", "team": "a"},
                         "labels": {"batch.kubernetes.io/controller-uid": "old-uid"}},
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"replicas": 5}
        });
        let created = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"generateName": "web-", "name": "web-x7k2p", "uid": "new-uid",
                         "labels": {"batch.kubernetes.io/controller-uid": "new-uid"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web2"}}}
        });
        let changes = replacement_diff(&live, &created, "web");
        let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "metadata.annotations",
                "spec.replicas",
                "spec.selector.matchLabels.app"
            ],
            "another manager's annotation and replicas go, the revision and uids are no change"
        );
        assert_eq!(changes[0].before, Some(json!({"team": "a"})));
        let mut only_revision = live.clone();
        only_revision["metadata"]["annotations"] =
            json!({"deployment.kubernetes.io/revision": "3"});
        assert!(
            replacement_diff(&only_revision, &created, "web")
                .iter()
                .all(|c| !c.path.starts_with("metadata")),
            "the revision alone is no change"
        );
    }

    #[test]
    fn reasons_say_how_each_kind_goes_and_how_to_keep_the_live_value() {
        let fields = vec!["spec.selector".to_string()];
        let deployment = reason("Deployment", &fields, propagation("Deployment"));
        assert!(
            deployment.starts_with("Deployment spec.selector is immutable: the Deployment is deleted with propagation Background (its ReplicaSets and pods with it)"),
            "{deployment}"
        );
        assert!(
            deployment.contains("`spec: { selector: … }`"),
            "{deployment}"
        );
        let set = reason("StatefulSet", &fields, propagation("StatefulSet"));
        assert!(set.contains("propagation Orphan"), "{set}");
        assert!(set.contains("keep running unowned"), "{set}");
        let data = reason("ConfigMap", &["data".into()], propagation("ConfigMap"));
        assert!(data.starts_with("ConfigMap data is immutable: "), "{data}");
        let two = reason(
            "Service",
            &["spec.clusterIP".into(), "spec.clusterIPs".into()],
            propagation("Service"),
        );
        assert!(
            two.starts_with("Service spec.clusterIP, spec.clusterIPs are immutable"),
            "{two}"
        );
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
                propagation: Propagation::Background,
            }
        );
    }
}
