//! The plan as data: one action per object (with its preconditions and field changes), the targets and
//! release it was made for, and its hash.

use super::*;

/// What a plan does to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")] // the same names as [`ActionKind::as_str`] (a test keeps them equal)
pub enum ActionKind {
    /// The object does not exist.
    Create,
    /// It exists and differs.
    Update,
    /// It exists and applying would change nothing.
    Unchanged,
    /// An earlier release owned it and the app no longer declares it.
    Delete,
    /// It exists, is not ours, and `--adopt` takes it over.
    Adopt,
    /// A Namespace that exists and is not the app's (a platform team made it): used as it is — never
    /// written, adopted, labelled or deleted; apply only checks it still exists (same UID).
    Use,
    /// It exists, is ours, and a field that cannot change in place changes (a Deployment's selector, a
    /// StatefulSet's volumeClaimTemplates, a finished Job's pod template, …): apply deletes it (with the
    /// action's `propagation`) and creates it again. The action's `reason` says which field and why.
    Replace,
}

/// What the plan saw of a live object; apply refuses if it changed. A change of status alone (controllers
/// update it all the time) changes the resourceVersion but not `content`, and is not a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// The object's UID.
    pub uid: String,
    /// Its resourceVersion.
    pub resource_version: String,
    /// Digest of the object without status and server-managed metadata (secret values as digests).
    pub content: String,
}

/// The digest a precondition compares: the object without status and server-managed metadata.
pub fn content_digest(live: &Value, key: &[u8; 32]) -> String {
    if live.get("kind").and_then(Value::as_str) == Some("Secret") {
        // `normalize` first: it drops managedFields and status before `redact` copies the object (the
        // two touch disjoint fields, so the order does not change the digest).
        crate::engine::hash::digest(&redact(&crate::engine::diff::normalize(live), key))
    } else {
        // Nothing to redact: the same digest, without copying the object.
        crate::engine::diff::normalized_digest(live)
    }
}

/// One object's action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// The object (serialized flat: `apiVersion`, `kind`, `namespace`, `name`).
    #[serde(flatten)]
    pub object: ObjectRef,
    /// What happens.
    pub action: ActionKind,
    /// Apply order: lower first; deletions run last, highest level first.
    pub level: u32,
    /// Field changes (secret values as keyed digests).
    pub diff: Vec<Change>,
    /// The live object as the plan saw it (`None`: it must not exist).
    pub precondition: Option<Precondition>,
    /// Digest of the desired object (secret values as digests); `None` for deletions.
    pub desired_digest: Option<String>,
    /// Fields taken over from other field managers (`plan --take-ownership`): the write uses force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub take: Vec<crate::engine::conflicts::Taken>,
    /// Why the object is replaced rather than updated ([`ActionKind::Replace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How a replace deletes the old object (`Orphan` for a StatefulSet: its pods and claims stay);
    /// `None` for other actions (and plans made before it was recorded: `Background`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation: Option<crate::engine::replace::Propagation>,
    /// The Helm release that claims the live object (`meta.helm.sh/release-name`), and whether the plan
    /// removes the claim (`--forget-helm-release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<crate::engine::helm::HelmClaim>,
    /// For a workload whose pod template changes: that its pods are replaced, in words (and which labels
    /// they gain, as when a takeover adds Piceli's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<String>,
    /// A Secret's generated keys (DSL keys) the plan makes again (`plan --rotate`): apply generates them
    /// whatever the live Secret holds. Part of the plan's hash, so rotating is approved like any change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rotate: Vec<String>,
    /// A Secret's generated data keys: whether each exists (kept, with its keyed fingerprint), is made at
    /// apply, or is rotated. Never a value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<GeneratedKey>,
}

/// What a plan does with one generated data key of a Secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedKey {
    /// The data key (`password`, `tls.crt`).
    pub key: String,
    /// `exists` (the live value is kept), `generate` (made at apply) or `rotate` (made again at apply).
    pub state: String,
    /// The live value's keyed digest (`exists`, `rotate`): the same value has the same fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl ActionKind {
    /// The name plans, the journal and JSON output use (`create`, `update`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Create => "create",
            ActionKind::Update => "update",
            ActionKind::Unchanged => "unchanged",
            ActionKind::Delete => "delete",
            ActionKind::Adopt => "adopt",
            ActionKind::Use => "use",
            ActionKind::Replace => "replace",
        }
    }
}

impl Action {
    /// The object's identity (`Kind/name` or `Kind/namespace/name` as text).
    pub fn key(&self) -> ObjectKey {
        self.object.key()
    }
    /// Whether applying it writes anything.
    pub fn changes(&self) -> bool {
        !matches!(self.action, ActionKind::Unchanged | ActionKind::Use)
    }
}

/// A plan: the target it was made for, every action, and the hash that approves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Format version.
    pub version: u32,
    /// The app.
    pub app: String,
    /// The target.
    pub target: String,
    /// The API server.
    pub server: String,
    /// The target namespace.
    pub namespace: String,
    /// Its UID when it exists (identifies the cluster with the server URL).
    pub namespace_uid: Option<String>,
    /// Actions in apply order.
    pub actions: Vec<Action>,
    /// The desired objects, secret values as keyed digests: what apply writes (secrets are filled in
    /// again from their sources, and must match their digests).
    pub objects: Vec<Value>,
    /// The release this plan restores, for a rollback plan.
    pub rollback_of: Option<u64>,
    /// The `external` objects the app refers to, as the plan found them (apply requires the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<crate::engine::externals::Requirement>,
    /// The Helm releases that claim objects of the plan (their bookkeeping, left alone unless forgotten).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helm: Vec<crate::engine::helm::HelmRelease>,
    /// blake3 of everything above, canonical.
    pub hash: String,
}

impl Plan {
    /// The hash of the plan's content (everything but `hash`).
    pub fn compute_hash(&self) -> String {
        // The plan's canonical form without `hash`: everything but the objects goes through a small
        // value; the objects (most of the bytes) are written from where they are, not copied. Every
        // field is named here (no `..`), so a new field cannot be left out of the hash unnoticed.
        let Plan {
            version,
            app,
            target,
            server,
            namespace,
            namespace_uid,
            actions,
            objects,
            rollback_of,
            requires,
            helm,
            hash: _,
        } = self;
        let head = serde_json::to_value(PlanHead {
            version: *version,
            app,
            target,
            server,
            namespace,
            namespace_uid,
            actions,
            rollback_of: *rollback_of,
            requires,
            helm,
        })
        .unwrap_or(Value::Null);
        match head.as_object() {
            Some(head) => crate::engine::hash::digest_with(head, "objects", objects),
            None => digest(&head),
        }
    }
    /// Whether anything would be written.
    pub fn has_changes(&self) -> bool {
        self.actions.iter().any(Action::changes)
    }
}

/// The fields of a [`Plan`] other than `objects` and `hash`, named as the plan names them.
#[derive(Serialize)]
pub(super) struct PlanHead<'a> {
    version: u32,
    app: &'a str,
    target: &'a str,
    server: &'a str,
    namespace: &'a str,
    namespace_uid: &'a Option<String>,
    actions: &'a [Action],
    rollback_of: Option<u64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    requires: &'a [crate::engine::externals::Requirement],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    helm: &'a [crate::engine::helm::HelmRelease],
}

#[cfg(test)]
mod action_kind_tests {
    use super::ActionKind;

    #[test]
    fn stored_names_are_the_serde_names() {
        use ActionKind::*;
        for k in [Create, Update, Unchanged, Delete, Adopt, Use, Replace] {
            assert_eq!(serde_json::to_value(k).expect("json"), k.as_str());
        }
    }
}

#[cfg(test)]
mod hash_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_plan_hash_is_the_digest_of_the_whole_plan_without_its_hash() {
        let required = crate::engine::externals::Requirement {
            object: ObjectRef::new("v1", "Secret", Some("hello"), "tls"),
            found: true,
            uid: Some("u".into()),
        };
        for requires in [Vec::new(), vec![required]] {
            let plan = Plan {
                version: 1,
                app: "hello".into(),
                target: "local".into(),
                server: "https://127.0.0.1:1".into(),
                namespace: "hello".into(),
                namespace_uid: None,
                actions: Vec::new(),
                objects: vec![json!({"kind": "ConfigMap", "data": {"b": "1", "a": "2"}})],
                rollback_of: Some(3),
                requires,
                helm: Vec::new(),
                hash: "ignored".into(),
            };
            let mut whole = serde_json::to_value(&plan).expect("json");
            whole.as_object_mut().expect("an object").remove("hash");
            assert_eq!(plan.compute_hash(), digest(&whole));
        }
    }
}
