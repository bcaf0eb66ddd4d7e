//! Secret values: read from their sources only when planning and applying, sent to the cluster, and
//! otherwise seen only as keyed digests (in plans, diffs, the journal and every output).

use super::error::EngineError;
use super::hash::secret_digest;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli_core::model::{App, SecretSource};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::path::Path;

/// What a plan records for a generated value that does not exist yet (made at apply time).
pub const TO_GENERATE: &str = "<generated at apply>";

/// The key for secret digests of one state directory (`DIR/secret-digest.key`, created on first use).
///
/// A new key is written into a private (`0600`, whatever the umask or the directory's mode) file beside
/// it and linked into place, so the key file never exists half-written and two processes making it at once
/// end up using the same one.
pub fn digest_key(state_dir: &Path) -> Result<[u8; 32], EngineError> {
    let path = state_dir.join("secret-digest.key");
    let read = || {
        std::fs::read(&path)
            .ok()
            .and_then(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
    };
    if let Some(key) = read() {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|e| EngineError::StateDir(format!("no randomness for the digest key: {e}")))?;
    crate::journal::create_state_dir(state_dir).map_err(EngineError::from)?;
    let fail =
        |at: &Path, e: std::io::Error| EngineError::StateDir(format!("{}: {e}", at.display()));
    let fresh = state_dir.join(format!("secret-digest.key.new-{}", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&fresh).and_then(|mut f| {
        std::io::Write::write_all(&mut f, &key)?;
        f.sync_all()
    });
    let placed = written.and_then(|()| match std::fs::hard_link(&fresh, &path) {
        // Someone else's key won the race: use it.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match read() {
            Some(theirs) => {
                key = theirs;
                Ok(())
            }
            // A damaged key file (wrong length): replace it.
            None => std::fs::rename(&fresh, &path),
        },
        // A file system without hard links.
        Err(_) => std::fs::rename(&fresh, &path),
        Ok(()) => Ok(()),
    });
    let _ = std::fs::remove_file(&fresh);
    placed.map_err(|e| fail(&path, e))?;
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
    env: &super::env_file::SecretEnv,
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
            SecretSource::Env(var) => env.get(&var.v).map(|v| STANDARD.encode(v)).ok_or_else(|| {
                fail(format!(
                    "environment variable `{}` is not set (in an `--env-file` or the environment)",
                    var.v
                ))
            })?,
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
/// Objects of other kinds come back as they are, without a copy.
pub fn redact<'a>(object: &'a Value, key: &[u8; 32]) -> Cow<'a, Value> {
    if object.get("kind").and_then(Value::as_str) != Some("Secret") {
        return Cow::Borrowed(object);
    }
    let mut out = object.clone();
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
    Cow::Owned(out)
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
