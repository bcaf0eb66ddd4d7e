//! Metadata every rendered object carries: name, namespace, the standard labels and ownership marks.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use piceli_core::model::{App, Labels};
use serde_json::Value;
use std::collections::BTreeMap;

/// The standard name label.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
/// The standard component label (the workload's name on its pods).
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
/// The standard managed-by label.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Our managed-by value.
pub const MANAGED_BY: &str = "piceli";
/// The annotation naming the target an object was rendered for.
pub const TARGET_ANNOTATION: &str = "piceli.dev/target";

/// Rendering context: the app (overrides applied), the namespace and the target.
pub struct Cx<'a> {
    /// The app.
    pub app: &'a App,
    /// Namespace of namespaced objects.
    pub namespace: String,
    /// The target, if any.
    pub target: Option<String>,
}

impl<'a> Cx<'a> {
    /// A context.
    pub fn new(app: &'a App, namespace: String, target: Option<String>) -> Self {
        Cx {
            app,
            namespace,
            target,
        }
    }

    /// Labels on every object: the app's own, then the standard ones.
    pub fn base_labels(&self) -> BTreeMap<String, String> {
        let mut labels = to_map(&self.app.labels);
        labels.insert(NAME_LABEL.into(), self.app.name.v.clone());
        labels.insert(MANAGED_BY_LABEL.into(), MANAGED_BY.into());
        labels
    }

    /// The labels that select a workload's pods.
    pub fn selector(&self, workload: &str) -> BTreeMap<String, String> {
        if let Some(own) = self.app.own_selector(workload) {
            return own.into_iter().collect();
        }
        BTreeMap::from([
            (NAME_LABEL.to_string(), self.app.name.v.clone()),
            (COMPONENT_LABEL.to_string(), workload.to_string()),
        ])
    }

    /// Metadata of a namespaced object.
    pub fn meta(&self, name: &str, labels: &Labels, annotations: &Labels) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(self.namespace.clone()),
            ..self.cluster_meta(name, labels, annotations)
        }
    }

    /// Metadata of a cluster-scoped object.
    pub fn cluster_meta(&self, name: &str, labels: &Labels, annotations: &Labels) -> ObjectMeta {
        let mut all = self.base_labels();
        all.extend(to_map(labels));
        let mut notes = to_map(&self.app.annotations);
        notes.extend(to_map(annotations));
        if let Some(t) = &self.target {
            notes.insert(TARGET_ANNOTATION.into(), t.clone());
        }
        ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(all),
            annotations: (!notes.is_empty()).then_some(notes),
            ..ObjectMeta::default()
        }
    }

    /// Mark an included object as ours: standard labels, target annotation, and the namespace when it is
    /// namespaced and has none.
    pub fn mark_included(&self, object: &mut Value) {
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        if !CLUSTER_SCOPED.contains(&kind.as_str()) && !meta.contains_key("namespace") {
            meta.insert("namespace".into(), Value::String(self.namespace.clone()));
        }
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(labels) = labels.as_object_mut() {
            // The app's name and managed-by are Piceli's (they make the object the app's: another tool's,
            // such as Helm's `managed-by: Helm`, gives way); the app's own labels fill what is unset.
            for (k, v) in self.base_labels() {
                if k == NAME_LABEL || k == MANAGED_BY_LABEL {
                    labels.insert(k, Value::String(v));
                } else {
                    labels.entry(k).or_insert(Value::String(v));
                }
            }
        }
        if let Some(t) = &self.target {
            let notes = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(notes) = notes.as_object_mut() {
                notes.insert(TARGET_ANNOTATION.into(), Value::String(t.clone()));
            }
        }
    }
}

pub use piceli_core::include::CLUSTER_SCOPED;

/// Labels as a sorted map.
pub fn to_map(labels: &Labels) -> BTreeMap<String, String> {
    labels
        .iter()
        .map(|(k, v)| (k.v.clone(), v.v.clone()))
        .collect()
}
