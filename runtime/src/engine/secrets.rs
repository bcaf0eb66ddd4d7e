//! Secret values: read from their sources only when planning and applying, sent to the cluster, and
//! otherwise seen only as keyed digests (in plans, diffs, the journal and every output).

use super::error::EngineError;
use super::hash::secret_digest;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli_core::model::{App, SecretSource};
use serde_json::{Map, Value};
use std::path::Path;

/// What a plan records for a generated value that does not exist yet (made at apply time).
pub const TO_GENERATE: &str = "<generated at apply>";

/// The key for secret digests of one state directory (`DIR/secret-digest.key`, created on first use).
pub fn digest_key(state_dir: &Path) -> Result<[u8; 32], EngineError> {
    let path = state_dir.join("secret-digest.key");
    if let Ok(bytes) = std::fs::read(&path)
        && let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice())
    {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|e| EngineError::Journal(format!("no randomness for the digest key: {e}")))?;
    std::fs::create_dir_all(state_dir)
        .map_err(|e| EngineError::Journal(format!("{}: {e}", state_dir.display())))?;
    std::fs::write(&path, key)
        .map_err(|e| EngineError::Journal(format!("{}: {e}", path.display())))?;
    Ok(key)
}

/// Fill a rendered Secret (redaction markers in `stringData`) with real `data` from its sources. A
/// `generated` key keeps the live value when there is one; otherwise it is generated now when `generate`,
/// or left as [`TO_GENERATE`] (planning).
pub fn materialize(
    app: &App,
    object: &mut Value,
    live: Option<&Value>,
    generate: bool,
) -> Result<(), EngineError> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Some(secret) = app.secrets.iter().find(|s| s.name.v == name) else {
        return Ok(());
    };
    let mut data = Map::new();
    for (key, source) in &secret.data {
        let fail = |reason: String| EngineError::SecretSource {
            secret: name.clone(),
            key: key.v.clone(),
            reason,
        };
        let value = match source {
            SecretSource::Env(var) => std::env::var(&var.v)
                .map(|v| STANDARD.encode(v))
                .map_err(|_| fail(format!("environment variable `{}` is not set", var.v)))?,
            SecretSource::File(path) => std::fs::read(&path.v)
                .map(|v| STANDARD.encode(v))
                .map_err(|e| fail(format!("cannot read `{}`: {e}", path.v)))?,
            SecretSource::Generated { length } => {
                match live
                    .and_then(|l| l.get("data"))
                    .and_then(|d| d.get(&key.v))
                    .and_then(Value::as_str)
                {
                    Some(existing) => existing.to_string(),
                    None if generate => {
                        STANDARD.encode(random_text(length.v.max(1) as usize).map_err(fail)?)
                    }
                    None => TO_GENERATE.to_string(),
                }
            }
        };
        data.insert(key.v.clone(), Value::String(value));
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("stringData");
        map.insert("data".into(), Value::Object(data));
    }
    Ok(())
}

fn random_text(len: usize) -> Result<String, String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
    Ok(bytes
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect())
}

/// The object with every Secret value replaced by its keyed digest (safe to print, store and hash).
pub fn redact(object: &Value, key: &[u8; 32]) -> Value {
    let mut out = object.clone();
    if out.get("kind").and_then(Value::as_str) != Some("Secret") {
        return out;
    }
    for field in ["data", "stringData"] {
        if let Some(map) = out.get_mut(field).and_then(Value::as_object_mut) {
            for v in map.values_mut() {
                let text = v.as_str().unwrap_or_default();
                if text == TO_GENERATE {
                    continue;
                }
                let bytes = if field == "data" {
                    STANDARD.decode(text).unwrap_or_default()
                } else {
                    text.as_bytes().to_vec()
                };
                *v = Value::String(secret_digest(key, &bytes));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redaction_hides_values() {
        let key = [7u8; 32];
        let s = json!({"kind": "Secret", "data": {"a": STANDARD.encode("canary")}, "stringData": {"b": "canary"}});
        let r = redact(&s, &key);
        assert!(!r.to_string().contains("canary"));
        assert!(!r.to_string().contains(&STANDARD.encode("canary")));
        assert_eq!(
            r["data"]["a"], r["stringData"]["b"],
            "same value, same digest"
        );
    }
}
