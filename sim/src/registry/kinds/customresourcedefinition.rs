//! CustomResourceDefinition (apiextensions.k8s.io/v1): the `Established`/`NamesAccepted` status the
//! server derives, its columns, and its objects deleted with it; writing one changes the served types.

use serde_json::{Map, Value, json};

use crate::registry::rules::invalid;
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::s;
use crate::registry::table::{Col, Printer};
use crate::status::{ApiError, Cause};
use crate::storage::Writer;

pub struct CustomResourceDefinition;

impl Strategy for CustomResourceDefinition {
    fn has_generation(&self) -> bool {
        true
    }

    /// `SetDefaults_CustomResourceDefinition`: conversion `None`, and the list kind and singular name
    /// from the kind.
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        spec.entry("conversion")
            .or_insert_with(|| json!({"strategy": "None"}));
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
            let kind = names
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !kind.is_empty() {
                names
                    .entry("listKind")
                    .or_insert_with(|| json!(format!("{kind}List")));
                names
                    .entry("singular")
                    .or_insert_with(|| json!(kind.to_lowercase()));
            }
        }
    }

    /// `ValidateCustomResourceDefinitionSpec`: exactly one version is the storage version.
    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        let versions = object.pointer("/spec/versions").and_then(Value::as_array);
        let storage = versions
            .into_iter()
            .flatten()
            .filter(|v| v["storage"] == json!(true))
            .count();
        if versions.is_some_and(|v| !v.is_empty()) && storage != 1 {
            out.push(invalid(
                "spec.versions",
                object.pointer("/spec/versions").unwrap_or(&Value::Null),
                "must have exactly one version marked as storage version",
            ));
        }
    }

    /// `ValidateCustomResourceDefinitionStoredVersions`: a version objects may still be stored in stays
    /// in `spec.versions` until a storage migration removed it from `status.storedVersions`.
    fn validate_update(&self, _old: &Value, new: &Value, out: &mut Vec<Cause>) {
        let listed: Vec<&str> = new
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v["name"].as_str())
            .collect();
        let stored = new
            .pointer("/status/storedVersions")
            .and_then(Value::as_array);
        for (i, v) in stored.into_iter().flatten().enumerate() {
            let Some(name) = v.as_str() else { continue };
            if !listed.contains(&name) {
                out.push(invalid(
                    &format!("status.storedVersions[{i}]"),
                    v,
                    &format!(
                        "missing from spec.versions; {name} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {name} and removes {name} from status.storedVersions"
                    ),
                ));
            }
        }
    }

    fn derive_status(&self, object: &mut Value) {
        // A new CRD is stored as kube-apiserver stores it, names not yet accepted; the write path
        // then accepts them as apiextensions' naming controller does (`crd_established`).
        if crate::registry::crd::names_accepted(object) {
            crate::registry::crd::set_status(object);
        } else if object.pointer("/status/acceptedNames").is_none() {
            crate::registry::crd::initial_status(object);
        }
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Created At", "date", 0)],
            cells: |o| vec![json!(s(o, "/metadata/creationTimestamp"))],
        })
    }

    /// Deleting a CRD deletes every object of its kind.
    fn after_remove(&self, w: &mut Writer<'_>, crd: &Value) -> Result<(), ApiError> {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("");
        let key = format!("{group}/{plural}");
        for item in w.list(&key, None)? {
            let rv = w.next_rv()?;
            let mut last = item.object;
            last["metadata"]["resourceVersion"] = json!(rv.to_string());
            w.delete(&key, &item.ns, &item.name, rv, last)?;
        }
        Ok(())
    }

    fn defines_types(&self) -> bool {
        true
    }
}
