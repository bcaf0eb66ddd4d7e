//! Namespace (v1): the `kubernetes` finalizer, `Active` phase and the `kubernetes.io/metadata.name`
//! label; its columns; a DELETE leaves it `Terminating` until its objects and finalizers are gone.

pub(crate) mod lifecycle;

use std::ops::ControlFlow;

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, set_default};
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, or_none, s};
use crate::registry::table::{AGE, Col, Printer};
use crate::registry::validate::NameRule;
use crate::status::ApiError;
use crate::storage::Writer;

pub struct Namespace;

impl Strategy for Namespace {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn prepare_create(&self, object: &mut Value) {
        // `namespaceStrategy.PrepareForCreate`: the finalizer is the server's, on create only.
        if let Some(spec) = object
            .as_object_mut()
            .map(|root| child(root, "spec"))
            .and_then(obj)
        {
            set_default(spec, "finalizers", json!(["kubernetes"]));
        }
    }

    fn prepare_update(&self, old: &Value, new: &mut Value) {
        // `namespaceStrategy.PrepareForUpdate`: the spec stays as stored.
        if let (Some(spec), Some(root)) = (old.get("spec"), new.as_object_mut()) {
            root.insert("spec".into(), spec.clone());
        }
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        if let Some(status) = obj(child(root, "status")) {
            set_default(status, "phase", json!("Active"));
        }
        let name = root.get("metadata").and_then(|m| m.get("name")).cloned();
        if let (Some(name), Some(meta)) = (name, root.get_mut("metadata").and_then(obj))
            && let Some(labels) = obj(child(meta, "labels"))
        {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// Marks the Namespace, deletes its objects, and finalizes it once nothing is left.
    fn delete(
        &self,
        w: &mut Writer<'_>,
        _ns: &str,
        name: &str,
        object: Value,
    ) -> Result<ControlFlow<Value, Value>, ApiError> {
        lifecycle::step(w, name, object).map(ControlFlow::Break)
    }

    /// Its `spec.finalizers` hold it too.
    fn finalized(&self, object: &Value) -> bool {
        lifecycle::may_go(object)
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Status", "string", 0), AGE],
            cells: |o| vec![json!(or_none(s(o, "/status/phase"))), json!(age(o))],
        })
    }
}
