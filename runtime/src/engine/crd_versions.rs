//! CustomResourceDefinition upgrades that cannot strand stored objects: the versions a new CRD keeps,
//! checked against the live one before anything is written (PCL0231). A change of scope or names is an
//! immutable-field refusal ([`super::immutable`], PCL0223).

use serde_json::Value;
use std::fmt;

/// Why a CRD change is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrdVersionProblem {
    /// Versions that `status.storedVersions` lists (objects may be stored in them) and the new CRD drops.
    DropsStoredVersions(Vec<String>),
    /// The new CRD marks no version as the storage version.
    NoStorageVersion,
    /// The new CRD marks several versions as the storage version.
    SeveralStorageVersions(Vec<String>),
}

impl fmt::Display for CrdVersionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CrdVersionProblem::DropsStoredVersions(versions) => write!(
                f,
                "drops {} {}, which status.storedVersions still lists: objects may be stored in {}",
                if versions.len() == 1 {
                    "version"
                } else {
                    "versions"
                },
                versions.join(", "),
                if versions.len() == 1 { "it" } else { "them" },
            ),
            CrdVersionProblem::NoStorageVersion => {
                f.write_str("marks no version as the storage version (`storage: true`)")
            }
            CrdVersionProblem::SeveralStorageVersions(versions) => write!(
                f,
                "marks {} as the storage version; exactly one may be",
                versions.join(" and ")
            ),
        }
    }
}

fn version_names(crd: &Value, keep: impl Fn(&Value) -> bool) -> Vec<String> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| keep(v))
        .filter_map(|v| v["name"].as_str().map(str::to_string))
        .collect()
}

/// The problem with replacing the `live` CRD's spec by `desired`'s, if any. A CRD created anew (no live
/// one) is checked by the server's dry run alone.
pub fn check(desired: &Value, live: &Value) -> Option<CrdVersionProblem> {
    let storage = version_names(desired, |v| v["storage"] == Value::Bool(true));
    match storage.len() {
        0 => return Some(CrdVersionProblem::NoStorageVersion),
        1 => {}
        _ => return Some(CrdVersionProblem::SeveralStorageVersions(storage)),
    }
    let kept = version_names(desired, |_| true);
    let dropped: Vec<String> = live
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|v| !kept.iter().any(|k| k == v))
        .map(str::to_string)
        .collect();
    (!dropped.is_empty()).then_some(CrdVersionProblem::DropsStoredVersions(dropped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(versions: &[(&str, bool)]) -> Value {
        let versions: Vec<Value> = versions
            .iter()
            .map(|(name, storage)| json!({"name": name, "served": true, "storage": storage}))
            .collect();
        json!({"kind": "CustomResourceDefinition", "spec": {"versions": versions}})
    }

    fn live(versions: &[(&str, bool)], stored: &[&str]) -> Value {
        let mut l = crd(versions);
        l["status"] = json!({"storedVersions": stored});
        l
    }

    #[test]
    fn a_new_storage_version_beside_the_stored_one_is_allowed() {
        let was = live(&[("v1", true)], &["v1"]);
        assert_eq!(check(&crd(&[("v1", false), ("v2", true)]), &was), None);
        assert_eq!(check(&crd(&[("v1", true)]), &was), None);
    }

    #[test]
    fn dropping_a_stored_version_is_refused_until_migration_removed_it() {
        let was = live(&[("v1", false), ("v2", true)], &["v1", "v2"]);
        let problem = check(&crd(&[("v2", true)]), &was).expect("refused");
        assert_eq!(
            problem,
            CrdVersionProblem::DropsStoredVersions(vec!["v1".into()])
        );
        assert_eq!(
            problem.to_string(),
            "drops version v1, which status.storedVersions still lists: objects may be stored in it"
        );
        let migrated = live(&[("v1", false), ("v2", true)], &["v2"]);
        assert_eq!(check(&crd(&[("v2", true)]), &migrated), None);
    }

    #[test]
    fn exactly_one_storage_version() {
        let was = live(&[("v1", true)], &["v1"]);
        assert_eq!(
            check(&crd(&[("v1", false)]), &was),
            Some(CrdVersionProblem::NoStorageVersion)
        );
        assert_eq!(
            check(&crd(&[("v1", true), ("v2", true)]), &was),
            Some(CrdVersionProblem::SeveralStorageVersions(vec![
                "v1".into(),
                "v2".into()
            ]))
        );
    }
}
