//! Secrets: where each value comes from (the environment, a file, or a generator), and which data keys a
//! generator fills. Values never live in the model.

use super::Labels;
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// The Secret type a TLS generator under the key `tls` gives its Secret when none is written.
pub const TLS_TYPE: &str = "kubernetes.io/tls";

/// A Secret: its values come from outside the source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Secret {
    /// Its name.
    pub name: Name,
    /// `Opaque` (default) or e.g. `kubernetes.io/tls`.
    pub secret_type: Option<Spanned<String>>,
    /// Key → where the value comes from.
    pub data: Vec<(Name, SecretSource)>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
}

impl Secret {
    /// The Secret's type: as written; else `kubernetes.io/tls` when a TLS generator fills `tls.crt` and
    /// `tls.key`; else `Opaque`.
    pub fn effective_type(&self) -> String {
        if let Some(t) = &self.secret_type {
            return t.v.clone();
        }
        let keys: Vec<String> = self.data_keys().into_iter().map(|(k, _)| k).collect();
        let tls = self.data.iter().any(|(_, s)| s.is_tls())
            && keys.iter().any(|k| k == "tls.crt")
            && keys.iter().any(|k| k == "tls.key");
        if tls { TLS_TYPE } else { "Opaque" }.to_string()
    }

    /// Every data key of the Secret with the index of the entry that fills it, in order (a TLS generator's
    /// key `K` fills `K.crt` and `K.key`, and `ca.crt` when signed by a CA).
    pub fn data_keys(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        for (i, (k, source)) in self.data.iter().enumerate() {
            for key in source.data_keys(&k.v) {
                out.push((key, i));
            }
        }
        out
    }

    /// The entry whose DSL key is `key`, or which fills the data key `key`.
    pub fn entry(&self, key: &str) -> Option<usize> {
        self.data.iter().position(|(k, _)| k.v == key).or_else(|| {
            self.data_keys()
                .into_iter()
                .find(|(k, _)| k == key)
                .map(|(_, i)| i)
        })
    }
}

/// Where a secret value comes from. Never a literal in source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SecretSource {
    /// An environment variable of the process that applies: `from_env("API_KEY")`.
    Env(Spanned<String>),
    /// A file read when applying, relative to the working directory: `from_file("secrets/key.pem")`.
    File(Spanned<String>),
    /// Random text, generated once at apply time and kept: `generate(random(32))` (or the older
    /// spelling `generated(length: 32)`).
    Generated {
        /// Length in characters.
        length: Spanned<i64>,
    },
    /// A self-signed certificate and its key, generated once and kept until rotated or expired:
    /// `generate(tls_self_signed(hosts: ["db"], days: 365))` (`ca: true` makes it a CA that
    /// `tls_signed_by` signs with).
    TlsSelfSigned {
        /// The subject alternative names (DNS names or IP addresses); the first is the common name.
        hosts: Vec<Spanned<String>>,
        /// How long it is valid, in days.
        days: Spanned<i64>,
        /// Whether it is a CA certificate.
        is_ca: bool,
    },
    /// A certificate signed by the CA another Secret of the app holds (`tls.crt`/`tls.key`):
    /// `generate(tls_signed_by(ca, hosts: ["db"], days: 90))`.
    TlsSignedBy {
        /// The Secret holding the CA.
        ca: Name,
        /// The subject alternative names; the first is the common name.
        hosts: Vec<Spanned<String>>,
        /// How long it is valid, in days.
        days: Spanned<i64>,
    },
    /// Text made of the Secret's other keys: `generate(template("postgres://app:{password}@db/app"))`.
    Template(Spanned<String>),
}

impl Default for SecretSource {
    fn default() -> Self {
        SecretSource::Env(Spanned::default())
    }
}

impl SecretSource {
    /// A description that carries no secret: what render shows instead of the value.
    pub fn redaction_marker(&self) -> String {
        match self {
            SecretSource::Env(var) => format!("<redacted: from_env {}>", var.v),
            SecretSource::File(path) => format!("<redacted: from_file {}>", path.v),
            SecretSource::Generated { length } => {
                format!("<redacted: generated length {}>", length.v)
            }
            SecretSource::TlsSelfSigned { .. } => "<redacted: generated tls_self_signed>".into(),
            SecretSource::TlsSignedBy { ca, .. } => {
                format!("<redacted: generated tls_signed_by {}>", ca.v)
            }
            SecretSource::Template(t) => format!("<redacted: generated template {:?}>", t.v),
        }
    }

    /// Whether the value is generated (and so kept from the live Secret, and rotatable).
    pub fn is_generated(&self) -> bool {
        !matches!(self, SecretSource::Env(_) | SecretSource::File(_))
    }

    /// Whether it is a TLS generator.
    pub fn is_tls(&self) -> bool {
        matches!(
            self,
            SecretSource::TlsSelfSigned { .. } | SecretSource::TlsSignedBy { .. }
        )
    }

    /// The data keys the entry `key` fills: itself, or a TLS generator's `key.crt`, `key.key` (and
    /// `ca.crt`, the signing CA's certificate).
    pub fn data_keys(&self, key: &str) -> Vec<String> {
        match self {
            SecretSource::TlsSelfSigned { .. } => vec![format!("{key}.crt"), format!("{key}.key")],
            SecretSource::TlsSignedBy { .. } => vec![
                format!("{key}.crt"),
                format!("{key}.key"),
                "ca.crt".to_string(),
            ],
            _ => vec![key.to_string()],
        }
    }

    /// The keys a template names, in order (an empty list for other sources; `Err` when it does not parse).
    pub fn template_keys(&self) -> Result<Vec<String>, String> {
        match self {
            SecretSource::Template(t) => parse_template(&t.v).map(|parts| {
                parts
                    .into_iter()
                    .filter_map(|p| match p {
                        TemplatePart::Key(k) => Some(k),
                        TemplatePart::Text(_) => None,
                    })
                    .collect()
            }),
            _ => Ok(Vec::new()),
        }
    }
}

/// A piece of a template: literal text, or a key whose value goes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    /// Literal text (`{{` and `}}` already made single braces).
    Text(String),
    /// `{key}`: the value of the Secret's data key.
    Key(String),
}

/// Split a template into text and keys: `{key}` names a data key (letters, digits, `-`, `_`, `.`), `{{` and
/// `}}` are literal braces. `Err` says what is wrong.
pub fn parse_template(template: &str) -> Result<Vec<TemplatePart>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut key = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(k) => key.push(k),
                        None => return Err(format!("`{{{key}` is not closed with `}}`")),
                    }
                }
                let valid = !key.is_empty()
                    && key
                        .chars()
                        .all(|k| k.is_ascii_alphanumeric() || matches!(k, '-' | '_' | '.'));
                if !valid {
                    return Err(format!("`{{{key}}}` does not name a key"));
                }
                if !text.is_empty() {
                    parts.push(TemplatePart::Text(std::mem::take(&mut text)));
                }
                parts.push(TemplatePart::Key(key));
            }
            '}' => return Err("a lone `}` (write `}}` for a brace)".into()),
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        parts.push(TemplatePart::Text(text));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_split_into_text_and_keys() {
        assert_eq!(
            parse_template("postgres://app:{password}@db/{{x}}").unwrap(),
            vec![
                TemplatePart::Text("postgres://app:".into()),
                TemplatePart::Key("password".into()),
                TemplatePart::Text("@db/{x}".into()),
            ]
        );
        assert_eq!(
            parse_template("{tls.crt}").unwrap(),
            vec![TemplatePart::Key("tls.crt".into())]
        );
        assert!(parse_template("a{b").is_err());
        assert!(parse_template("a{}b").is_err());
        assert!(parse_template("a{b c}").is_err());
        assert!(parse_template("a}b").is_err());
    }

    #[test]
    fn tls_generators_fill_crt_and_key_and_set_the_type() {
        let tls = SecretSource::TlsSelfSigned {
            hosts: vec![Spanned::bare("db".to_string())],
            days: Spanned::bare(365),
            is_ca: false,
        };
        let s = Secret {
            data: vec![(Spanned::bare("tls".to_string()), tls)],
            ..Secret::default()
        };
        let keys: Vec<String> = s.data_keys().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["tls.crt", "tls.key"]);
        assert_eq!(s.effective_type(), TLS_TYPE);
        assert_eq!(s.entry("tls.key"), Some(0));
        let plain = Secret::default();
        assert_eq!(plain.effective_type(), "Opaque");
    }
}
