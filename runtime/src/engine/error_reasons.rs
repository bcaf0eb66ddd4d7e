//! Why an approved plan no longer holds: the reasons apply's refusals carry beside the object they are
//! about, so callers match on them instead of reading words (the words are their `Display`).

use crate::identity::ObjectKey;
use std::fmt;

/// How a live object differs from what the plan saw (PCL0107: the cluster changed since the plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    /// The plan creates it, and an apply of this app already did (this plan or another).
    CreatedByThisApp,
    /// The plan creates it, and someone else made it.
    CreatedBySomeoneElse,
    /// The plan creates the namespace, and someone else made it first (another apply of a plan made
    /// before it existed, or it is still terminating).
    NamespaceCreatedBySomeoneElse,
    /// The plan saw it, and it is gone.
    Deleted,
    /// The namespace this apply created vanished before its lock was taken.
    DeletedWhileCreated,
    /// The plan saw it, and its content (or UID) changed.
    Changed,
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Drift::CreatedByThisApp => {
                "was created by an apply of this app since the plan (this plan was already applied, or another plan was)"
            }
            Drift::CreatedBySomeoneElse => "was created by someone else since the plan",
            Drift::NamespaceCreatedBySomeoneElse => {
                "was created by someone else since the plan (another apply of a plan made before the namespace existed, or it is still terminating)"
            }
            Drift::Deleted => "was deleted since the plan",
            Drift::DeletedWhileCreated => "was deleted while this apply created it",
            Drift::Changed => "was changed since the plan",
        })
    }
}

/// How the app (or the state directory) no longer matches the approved plan (PCL0114: stale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// The plan acts on the object and carries no desired object for it.
    NotInPlan,
    /// Its secret values (read again from their sources) differ from the planned digests.
    SecretValuesChanged,
    /// It renders differently now than when the plan was made.
    RendersDifferently,
    /// A resumed release has a step for it that its plan does not.
    StepNotInPlan {
        /// The release being resumed.
        release: u64,
    },
    /// A resumed release writes it, and the app no longer declares it.
    NoLongerDeclared,
}

impl Staleness {
    /// The sentence, about `object`.
    pub fn describe(&self, object: &ObjectKey) -> String {
        match self {
            Staleness::NotInPlan => format!("the plan has no object for {object}"),
            Staleness::SecretValuesChanged => {
                format!("the values of {object} changed since the plan")
            }
            Staleness::RendersDifferently => {
                format!("{object} renders differently than when it was planned")
            }
            Staleness::StepNotInPlan { release } => {
                format!("release {release} has a step for {object} its plan does not")
            }
            Staleness::NoLongerDeclared => format!("the app no longer declares {object}"),
        }
    }
}

/// How an `external` object changed since the plan found it (PCL0166).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalChange {
    /// It was missing and now exists.
    Appeared,
    /// It existed and is gone.
    Disappeared,
    /// Another object of that name (another UID) took its place.
    Replaced,
}

impl fmt::Display for ExternalChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExternalChange::Appeared => "appeared",
            ExternalChange::Disappeared => "disappeared",
            ExternalChange::Replaced => "was replaced (another UID)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_the_sentences_users_see() {
        let key = ObjectKey::new("ConfigMap", Some("shop"), "settings");
        assert_eq!(
            format!("{key} {}", Drift::Deleted),
            "ConfigMap/shop/settings was deleted since the plan"
        );
        assert_eq!(
            Staleness::StepNotInPlan { release: 3 }.describe(&key),
            "release 3 has a step for ConfigMap/shop/settings its plan does not"
        );
        assert_eq!(
            ExternalChange::Replaced.to_string(),
            "was replaced (another UID)"
        );
    }
}
