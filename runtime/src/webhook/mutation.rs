//! `Mutation`: what a mutating handler answers, and how a chain of them becomes one JSON Patch.

use std::fmt::Display;

use serde::Serialize;
use serde_json::Value;

/// A mutating handler's answer: the changed object (the runtime computes the RFC 6902 JSON Patch), a JSON
/// Patch of its own, no change, or a refusal.
///
/// ```
/// use piceli_runtime::webhook::Mutation;
/// use piceli_runtime::webhook::json_patch::{AddOperation, Patch, PatchOperation};
/// let add = PatchOperation::Add(AddOperation {
///     path: "/metadata/labels/team".parse().unwrap(),
///     value: "shop".into(),
/// });
/// let m = Mutation::patch(Patch(vec![add])).warn("labelled");
/// assert!(!m.is_denied());
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Mutation {
    pub(crate) change: Change,
    pub(crate) warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Change {
    None,
    /// The whole new object (or why it could not be turned into JSON).
    Object(Result<Value, String>),
    Patch(json_patch::Patch),
    Deny(String),
}

impl Mutation {
    /// The object as it should be admitted; the response carries the JSON Patch from the request's object
    /// to this one.
    pub fn object<T: Serialize>(object: T) -> Mutation {
        Mutation::from(Change::Object(
            serde_json::to_value(object).map_err(|e| format!("cannot serialize the object: {e}")),
        ))
    }

    /// A JSON Patch (RFC 6902) to apply to the object as this handler received it.
    pub fn patch(ops: json_patch::Patch) -> Mutation {
        Mutation::from(Change::Patch(ops))
    }

    /// Admit the object unchanged.
    pub fn none() -> Mutation {
        Mutation::from(Change::None)
    }

    /// Refuse the request with `message` (in a composite, the mutators after this one do not run).
    pub fn deny(message: impl Display) -> Mutation {
        Mutation::from(Change::Deny(message.to_string()))
    }

    /// Adds a warning the client prints (`Warning: …`).
    pub fn warn(mut self, warning: impl Display) -> Mutation {
        self.warnings.push(warning.to_string());
        self
    }

    /// True for [`Mutation::deny`].
    pub fn is_denied(&self) -> bool {
        matches!(self.change, Change::Deny(_))
    }

    /// The warnings, in the order they were added.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Applies this mutation to `object` (the JSON the handler received): the new object, or why the
    /// request fails. `Ok(None)` means denied with the given message.
    pub(crate) fn apply_to(self, object: &mut Value) -> Result<Option<String>, String> {
        match self.change {
            Change::None => Ok(None),
            Change::Object(Ok(new)) => {
                *object = new;
                Ok(None)
            }
            Change::Object(Err(e)) => Err(e),
            Change::Patch(ops) => json_patch::patch(object, &ops)
                .map(|()| None)
                .map_err(|e| format!("the handler's JSON Patch does not apply: {e}")),
            Change::Deny(message) => Ok(Some(message)),
        }
    }
}

impl From<Change> for Mutation {
    fn from(change: Change) -> Mutation {
        Mutation {
            change,
            warnings: Vec::new(),
        }
    }
}

/// What a mutating handler may return: a [`Mutation`], or a `Result` whose error fails the request with
/// its message.
pub trait IntoMutation: Send + 'static {
    /// The mutation, or the handler's failure.
    fn into_mutation(self) -> Result<Mutation, String>;
}

impl IntoMutation for Mutation {
    fn into_mutation(self) -> Result<Mutation, String> {
        Ok(self)
    }
}

impl<E: Display + Send + 'static> IntoMutation for Result<Mutation, E> {
    fn into_mutation(self) -> Result<Mutation, String> {
        self.map_err(|e| e.to_string())
    }
}

/// The JSON Patch from `before` to `after` (empty when they are equal).
pub(crate) fn diff(before: &Value, after: &Value) -> json_patch::Patch {
    json_patch::diff(before, after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_mutation_becomes_the_patch_between_the_objects() {
        let before = json!({"metadata": {"name": "web", "labels": {"app": "web"}}});
        let mut now = before.clone();
        let mut changed = before.clone();
        changed["metadata"]["labels"]["team"] = json!("shop");
        assert_eq!(Mutation::object(&changed).apply_to(&mut now), Ok(None));
        let patch = serde_json::to_value(diff(&before, &now)).expect("json");
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/metadata/labels/team", "value": "shop"}])
        );
    }

    #[test]
    fn a_patch_that_does_not_apply_is_a_failure_with_the_reason() {
        let mut now = json!({"metadata": {}});
        let ops: json_patch::Patch =
            serde_json::from_value(json!([{"op": "remove", "path": "/spec/replicas"}]))
                .expect("ops");
        let err = Mutation::patch(ops).apply_to(&mut now).unwrap_err();
        assert!(
            err.starts_with("the handler's JSON Patch does not apply"),
            "{err}"
        );
        assert_eq!(
            Mutation::deny("no").apply_to(&mut now),
            Ok(Some("no".into()))
        );
        assert_eq!(Mutation::none().apply_to(&mut now), Ok(None));
        assert_eq!(now, json!({"metadata": {}}));
    }
}
