//! Registry credentials from a named docker config file (its `auths`), never an ambient one.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;

use crate::error::ImageError;

/// A user name and password (or token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or access token (hidden from `Debug`).
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

impl Credentials {
    /// The `Authorization: Basic …` value.
    pub fn basic(&self) -> String {
        let raw = format!("{}:{}", self.username, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }
}

/// The `auths` of a docker config file, keyed by registry host.
#[derive(Debug, Clone, Default)]
pub struct DockerConfig {
    auths: BTreeMap<String, Credentials>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    auths: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

impl DockerConfig {
    /// Reads the docker config file at `path` (the one the user named; nothing else is looked at).
    pub fn load(path: &Path) -> Result<DockerConfig, ImageError> {
        let fail = |detail: String| ImageError::Auth {
            registry: path.display().to_string(),
            detail,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail(format!("cannot read the docker config: {e}")))?;
        DockerConfig::parse(&text).map_err(fail)
    }

    /// Parses a docker config's text.
    pub fn parse(text: &str) -> Result<DockerConfig, String> {
        let file: File = serde_json::from_str(text)
            .map_err(|e| format!("the docker config is not valid: {e}"))?;
        let mut auths = BTreeMap::new();
        for (key, entry) in file.auths {
            let creds = match (entry.auth, entry.username, entry.password) {
                (Some(auth), _, _) => {
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(auth.trim())
                        .map_err(|_| format!("the `auth` of `{key}` is not base64"))?;
                    let raw = String::from_utf8(raw)
                        .map_err(|_| format!("the `auth` of `{key}` is not UTF-8"))?;
                    let (u, p) = raw
                        .split_once(':')
                        .ok_or_else(|| format!("the `auth` of `{key}` is not `user:password`"))?;
                    Credentials {
                        username: u.to_string(),
                        password: p.to_string(),
                    }
                }
                (None, Some(username), Some(password)) => Credentials { username, password },
                _ => continue,
            };
            auths.insert(host_of(&key).to_string(), creds);
        }
        Ok(DockerConfig { auths })
    }

    /// The credentials for `registry` (`HOST[:PORT]`), if the file has them.
    pub fn for_registry(&self, registry: &str) -> Option<&Credentials> {
        let key = if registry == "docker.io" {
            "index.docker.io"
        } else {
            registry
        };
        self.auths.get(key)
    }
}

/// `https://index.docker.io/v1/` → `index.docker.io`; `ghcr.io` stays.
fn host_of(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auths_are_read_by_host() {
        let text = r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dTpw"},"127.0.0.1:5000":{"username":"a","password":"b"}}}"#;
        let config = DockerConfig::parse(text).expect("parse");
        let hub = config.for_registry("docker.io").expect("hub");
        assert_eq!((hub.username.as_str(), hub.password.as_str()), ("u", "p"));
        assert_eq!(
            config
                .for_registry("127.0.0.1:5000")
                .expect("local")
                .basic(),
            "Basic YTpi"
        );
        assert!(config.for_registry("ghcr.io").is_none());
        assert!(format!("{hub:?}").contains("<hidden>") && !format!("{hub:?}").contains("\"p\""));
    }

    #[test]
    fn a_bad_auth_is_an_error() {
        assert!(DockerConfig::parse(r#"{"auths":{"x.io":{"auth":"!!"}}}"#).is_err());
    }
}
