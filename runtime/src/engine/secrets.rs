//! Secret values: read from their sources only when planning and applying, sent to the cluster, and
//! otherwise seen only as keyed digests (in plans, diffs, the journal and every output).

use super::error::EngineError;
use super::generate::{self, random_text};
use super::hash::secret_digest;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli_core::model::{App, SecretSource, TemplatePart, parse_template};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
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

/// The CAs a plan or apply has filled in so far (Secret name → its data, base64), for the certificates
/// signed by them: in memory only, never stored or printed (its `Debug` shows no value).
#[derive(Default)]
pub struct Cas(std::sync::Mutex<BTreeMap<String, Map<String, Value>>>);

impl std::fmt::Debug for Cas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cas(<redacted>)")
    }
}

impl Cas {
    /// Whether the CA in the Secret `name` is filled in.
    pub fn has(&self, name: &str) -> bool {
        self.lock().contains_key(name)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Map<String, Value>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How to fill one Secret's values.
pub struct Fill<'a> {
    /// The live Secret, if any: a generated value it holds is kept.
    pub live: Option<&'a Value>,
    /// Generate what is missing now (apply); else leave it [`TO_GENERATE`] (plan).
    pub generate: bool,
    /// Where `from_env` reads.
    pub env: &'a super::env_file::SecretEnv,
    /// The entries (DSL keys) to generate again whatever the live Secret holds (`plan --rotate`).
    pub rotate: &'a [String],
    /// The CAs filled so far, read by `tls_signed_by` and added to when this Secret is a CA.
    pub cas: &'a Cas,
}

/// Fill a rendered Secret (redaction markers in `stringData`) with real `data` from its sources. A
/// generated key keeps the live value when there is one (unless rotated); otherwise it is generated now
/// when `generate`, or left as [`TO_GENERATE`] (planning). A template is made of the values around it.
pub fn materialize(app: &App, object: &mut Value, fill: &Fill<'_>) -> Result<(), EngineError> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Some(secret) = app.secrets.iter().find(|s| s.name.v == name) else {
        return Ok(());
    };
    let live_data = |key: &str| {
        fill.live
            .and_then(|l| l.get("data"))
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
    };
    // Data key → its value (base64), `None` while it is still to generate; templates last.
    let mut values: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (key, source) in &secret.data {
        let fail = |reason: String| EngineError::SecretSource {
            secret: name.clone(),
            key: key.v.clone(),
            reason,
        };
        let keys = source.data_keys(&key.v);
        if source.is_generated() && !matches!(source, SecretSource::Template(_)) {
            let rotated = fill.rotate.contains(&key.v);
            // Every key it fills, live: kept (a certificate without its key is made again).
            let live: Option<Vec<String>> = keys
                .iter()
                .map(|k| live_data(k).map(str::to_string))
                .collect();
            let made: Vec<Option<String>> = match live {
                Some(kept) if !rotated => kept.into_iter().map(Some).collect(),
                _ if fill.generate => generated(app, source, fill.cas)
                    .map_err(fail)?
                    .into_iter()
                    .map(|bytes| Some(STANDARD.encode(bytes)))
                    .collect(),
                _ => keys.iter().map(|_| None).collect(),
            };
            values.extend(keys.into_iter().zip(made));
            continue;
        }
        let value = match source {
            SecretSource::Env(var) => fill.env.get(&var.v).map(|v| STANDARD.encode(v)).ok_or_else(|| {
                fail(format!(
                    "environment variable `{}` is not set (in an `--env-file` or the environment)",
                    var.v
                ))
            })?,
            SecretSource::File(path) => std::fs::read(&path.v)
                .map(|v| STANDARD.encode(v))
                .map_err(|e| fail(format!("cannot read `{}`: {e}", path.v)))?,
            _ => continue,
        };
        values.insert(key.v.clone(), Some(value));
    }
    fill_templates(secret, &name, &mut values)?;
    if signs(app, &name) {
        let known: Map<String, Value> = values
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), Value::String(v.clone()?))))
            .collect();
        let mut cas = fill.cas.lock();
        cas.insert(name.clone(), known);
    }
    let mut data = Map::new();
    for (key, _) in secret.data_keys() {
        let v = values.get(&key).cloned().flatten();
        data.insert(
            key,
            Value::String(v.unwrap_or_else(|| TO_GENERATE.to_string())),
        );
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("stringData");
        map.insert("data".into(), Value::Object(data));
    }
    Ok(())
}

/// Whether another Secret of the app is signed by the Secret `name`.
pub fn signs(app: &App, name: &str) -> bool {
    app.secrets.iter().any(|s| {
        s.data
            .iter()
            .any(|(_, src)| matches!(src, SecretSource::TlsSignedBy { ca, .. } if ca.v == name))
    })
}

/// The Secrets whose CA signs a certificate of the Secret `name`.
pub fn signed_by(app: &App, name: &str) -> Vec<String> {
    app.secrets
        .iter()
        .filter(|s| s.name.v == name)
        .flat_map(|s| &s.data)
        .filter_map(|(_, src)| match src {
            SecretSource::TlsSignedBy { ca, .. } => Some(ca.v.clone()),
            _ => None,
        })
        .collect()
}

/// New bytes for each data key a generator fills, in [`SecretSource::data_keys`] order.
fn generated(app: &App, source: &SecretSource, cas: &Cas) -> Result<Vec<Vec<u8>>, String> {
    let hosts = |hosts: &[piceli_core::spanned::Spanned<String>]| -> Vec<String> {
        hosts.iter().map(|h| h.v.clone()).collect()
    };
    match source {
        SecretSource::Generated { length } => {
            Ok(vec![random_text(length.v.max(1) as usize)?.into_bytes()])
        }
        SecretSource::TlsSelfSigned {
            hosts: h,
            days,
            is_ca,
        } => {
            let pem = generate::tls_self_signed(&hosts(h), days.v, *is_ca)?;
            Ok(vec![pem.cert.into_bytes(), pem.key.into_bytes()])
        }
        SecretSource::TlsSignedBy { ca, hosts: h, days } => {
            let pem_of = |data: &Map<String, Value>, k: &str| {
                data.get(k)
                    .and_then(Value::as_str)
                    .and_then(|b| STANDARD.decode(b).ok())
                    .and_then(|b| String::from_utf8(b).ok())
            };
            let ca_pem = {
                let cas = cas.lock();
                cas.get(&ca.v).and_then(|d| {
                    Some(generate::Pem {
                        cert: pem_of(d, "tls.crt")?,
                        key: pem_of(d, "tls.key")?,
                    })
                })
            };
            let Some(ca_pem) = ca_pem else {
                let declared = app.secrets.iter().any(|s| s.name.v == ca.v);
                return Err(format!(
                    "the CA in secret `{}` is not available to sign with{}",
                    ca.v,
                    if declared {
                        " (it has no `tls.crt` and `tls.key` yet)"
                    } else {
                        ""
                    }
                ));
            };
            let pem = generate::tls_signed_by(&hosts(h), days.v, &ca_pem)?;
            Ok(vec![
                pem.cert.into_bytes(),
                pem.key.into_bytes(),
                ca_pem.cert.into_bytes(),
            ])
        }
        SecretSource::Env(_) | SecretSource::File(_) | SecretSource::Template(_) => Ok(Vec::new()),
    }
}

/// Fill each template from the values around it, a template naming another after that one (the macro
/// refused cycles).
fn fill_templates(
    secret: &piceli_core::model::Secret,
    name: &str,
    values: &mut BTreeMap<String, Option<String>>,
) -> Result<(), EngineError> {
    let is_template = |k: &str| {
        secret
            .data
            .iter()
            .any(|(d, s)| d.v == k && matches!(s, SecretSource::Template(_)))
    };
    let mut todo: Vec<(&str, &str)> = secret
        .data
        .iter()
        .filter_map(|(k, src)| match src {
            SecretSource::Template(t) => Some((k.v.as_str(), t.v.as_str())),
            _ => None,
        })
        .collect();
    while !todo.is_empty() {
        let before = todo.len();
        let mut left = Vec::new();
        for (key, template) in todo {
            let fail = |reason: String| EngineError::SecretSource {
                secret: name.to_string(),
                key: key.to_string(),
                reason,
            };
            let parts = parse_template(template).map_err(fail)?;
            let waiting = parts.iter().any(
                |p| matches!(p, TemplatePart::Key(k) if is_template(k) && !values.contains_key(k)),
            );
            if waiting {
                left.push((key, template));
                continue;
            }
            let decoded: BTreeMap<String, Option<Vec<u8>>> = values
                .iter()
                .map(|(k, v)| {
                    let bytes = v.as_ref().map(|b| STANDARD.decode(b).unwrap_or_default());
                    (k.clone(), bytes)
                })
                .collect();
            let value = match generate::fill_template(template, &decoded).map_err(fail)? {
                generate::Filled::Text(t) => Some(STANDARD.encode(t)),
                generate::Filled::Pending => None,
            };
            values.insert(key.to_string(), value);
        }
        if left.len() == before {
            return Err(EngineError::SecretSource {
                secret: name.to_string(),
                key: left[0].0.to_string(),
                reason: "its template names itself through other templates".into(),
            });
        }
        todo = left;
    }
    Ok(())
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
