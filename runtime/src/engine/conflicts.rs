//! Field-manager conflicts found while planning: every field another manager (`kubectl scale`, `kubectl
//! set image`, a controller) owns and the app would change, collected over the whole plan, and which of
//! them `plan --take-ownership [FIELD]` takes over (the approved plan then applies those objects with force).

use serde::{Deserialize, Serialize};

/// One field another manager owns that the app's apply would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldConflict {
    /// `Kind/namespace/name` of the object.
    pub object: String,
    /// The field, as the API server names it (`.spec.replicas`).
    pub field: String,
    /// Who owns it now (`kubectl`, `"kubectl" using apps/v1`).
    pub manager: String,
}

impl std::fmt::Display for FieldConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (owned by {})",
            self.object, self.field, self.manager
        )
    }
}

/// A field the plan takes over from another manager (recorded in the plan, so the hash covers it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taken {
    /// The field.
    pub field: String,
    /// The manager it is taken from.
    pub from: String,
}

/// What `--take-ownership` asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TakeOwnership {
    /// Nothing: conflicts are reported.
    #[default]
    None,
    /// Every conflicting field (`--take-ownership` alone).
    All,
    /// These fields (`--take-ownership .spec.replicas`, or `Deployment/web:.spec.replicas` for one object).
    Fields(Vec<String>),
}

impl TakeOwnership {
    /// Whether the conflict is one to take.
    pub fn takes(&self, c: &FieldConflict) -> bool {
        let normal = |f: &str| format!(".{}", f.trim_start_matches('.'));
        match self {
            TakeOwnership::None => false,
            TakeOwnership::All => true,
            TakeOwnership::Fields(fields) => fields.iter().any(|f| match f.split_once(':') {
                Some((object, field)) => {
                    object_matches(object, &c.object) && normal(field) == normal(&c.field)
                }
                None => normal(f) == normal(&c.field),
            }),
        }
    }
}

/// `Kind/name` (case-insensitive kind) or `Kind/namespace/name` names the object `key`.
fn object_matches(given: &str, key: &str) -> bool {
    let parts: Vec<&str> = key.split('/').collect();
    let (kind, name) = (parts[0], parts[parts.len() - 1]);
    match given.split('/').collect::<Vec<_>>().as_slice() {
        [k, n] => k.eq_ignore_ascii_case(kind) && *n == name,
        _ => given.eq_ignore_ascii_case(key),
    }
}

/// The conflicts a 409 answer to a server-side apply lists (one per cause), for the object `object`.
/// Falls back to the message when the server sent no causes.
pub fn from_status(object: &str, status: &kube::core::Status) -> Vec<FieldConflict> {
    let causes = status
        .details
        .as_ref()
        .map(|d| d.causes.clone())
        .unwrap_or_default();
    let found: Vec<FieldConflict> = causes
        .iter()
        .filter(|c| c.reason == "FieldManagerConflict" || c.message.starts_with("conflict with"))
        .map(|c| FieldConflict {
            object: object.to_string(),
            field: c.field.clone(),
            manager: c
                .message
                .strip_prefix("conflict with ")
                .unwrap_or(&c.message)
                .to_string(),
        })
        .collect();
    if found.is_empty() {
        return vec![FieldConflict {
            object: object.to_string(),
            field: "(see the message)".into(),
            manager: status.message.clone(),
        }];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(field: &str) -> FieldConflict {
        FieldConflict {
            object: "Deployment/shop/web".into(),
            field: field.into(),
            manager: "\"kubectl\" using apps/v1".into(),
        }
    }

    #[test]
    fn fields_are_matched_with_or_without_the_object() {
        let replicas = conflict(".spec.replicas");
        let image = conflict(".spec.template.spec.containers[name=\"web\"].image");
        let one = TakeOwnership::Fields(vec!["spec.replicas".into()]);
        assert!(one.takes(&replicas));
        assert!(!one.takes(&image));
        let scoped = TakeOwnership::Fields(vec!["deployment/web:.spec.replicas".into()]);
        assert!(scoped.takes(&replicas));
        let other = TakeOwnership::Fields(vec!["Deployment/api:.spec.replicas".into()]);
        assert!(!other.takes(&replicas));
        assert!(TakeOwnership::All.takes(&image));
        assert!(!TakeOwnership::None.takes(&image));
    }

    #[test]
    fn conflicts_are_read_from_the_status_causes() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas",
            "details": { "causes": [{ "reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl\" using apps/v1", "field": ".spec.replicas" }] }
        }))
        .expect("status");
        assert_eq!(
            from_status("Deployment/shop/web", &status),
            vec![conflict(".spec.replicas")]
        );
    }
}
