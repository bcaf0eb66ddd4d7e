//! A Secret's generated keys in a plan: which exist (kept, shown by fingerprint), which are made at apply,
//! and which `--rotate` makes again — a rotation (or a key new to a live Secret) is an `update` whose diff
//! names each such key, so it is approved like any change.

use super::*;
use crate::engine::hash::secret_digest;
use crate::engine::rotate::Rotations;
use crate::engine::secrets::TO_GENERATE;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli_core::model::SecretSource;

/// The generated entries (DSL keys) of the Secret `name` that the plan rotates.
pub(super) fn rotated(rotations: &Rotations, name: &str) -> Vec<String> {
    rotations
        .get(name)
        .map(|keys| keys.iter().cloned().collect())
        .unwrap_or_default()
}

/// What the plan does with each generated data key of the filled Secret `object` (`live`: as it is now).
pub(super) fn keys(
    app: &App,
    object: &Value,
    live: Option<&Value>,
    rotate: &[String],
    key: &[u8; 32],
) -> Vec<GeneratedKey> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let Some(secret) = app.secrets.iter().find(|s| s.name.v == name) else {
        return Vec::new();
    };
    let digest = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| *s != TO_GENERATE)
            .map(|b| secret_digest(key, &STANDARD.decode(b).unwrap_or_default()))
    };
    let mut out = Vec::new();
    for (data_key, i) in secret.data_keys() {
        let (entry, source) = &secret.data[i];
        if !source.is_generated() {
            continue;
        }
        let was = digest(live.and_then(|l| l["data"].get(&data_key)));
        let now = digest(object["data"].get(&data_key));
        let state = match (&was, &now) {
            (Some(_), _) if rotate.contains(&entry.v) => "rotate",
            (_, None) => "generate",
            (Some(w), Some(n)) if w == n => "exists",
            // A template made again from keys that changed.
            (Some(_), Some(_)) if matches!(source, SecretSource::Template(_)) => "update",
            (None, Some(_)) => "generate",
            (Some(_), Some(_)) => "update",
        };
        out.push(GeneratedKey {
            key: data_key,
            state: state.to_string(),
            fingerprint: if state == "generate" { None } else { was },
        });
    }
    out
}

/// A Secret the plan gives new generated values changes even when nothing else does: `update`, with a
/// diff entry for each key rotated (its fingerprint → made at apply) or new to a Secret that exists (a key
/// added to the app). Without it, a dry run that leaves such keys out would find nothing to change.
pub(super) fn new_values_are_changes(action: &mut Action) {
    if !matches!(action.action, ActionKind::Unchanged | ActionKind::Update) {
        return;
    }
    let made: Vec<Change> = action
        .generated
        .iter()
        .filter(|g| g.state == "rotate" || g.state == "generate")
        .map(|g| Change {
            path: format!("data.{}", g.key),
            before: g.fingerprint.clone().map(Value::String),
            after: Some(Value::String(TO_GENERATE.to_string())),
        })
        .collect();
    if made.is_empty() {
        return;
    }
    action
        .diff
        .retain(|c| !made.iter().any(|r| r.path == c.path));
    action.diff.extend(made);
    action.action = ActionKind::Update;
}
