//! Content digests as OCI writes them: `sha256:<64 hex digits>`.

use std::fmt;

use sha2::{Digest as _, Sha256};

use crate::error::ImageError;

/// A sha256 content digest (`sha256:…`), the identity of every blob, layer and manifest.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct Digest(String);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(format!("sha256:{}", hex(&Sha256::digest(bytes))))
    }

    /// Parses `sha256:<64 lowercase hex>`.
    pub fn parse(text: &str) -> Result<Digest, ImageError> {
        let ok = text.strip_prefix("sha256:").is_some_and(|h| {
            h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if ok {
            Ok(Digest(text.to_string()))
        } else {
            Err(ImageError::BadDigest {
                text: text.to_string(),
            })
        }
    }

    /// The full text (`sha256:…`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The hex part, the file name of a blob in an OCI layout.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Digest {
    type Error = ImageError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Digest::parse(&text)
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.0
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_is_the_well_known_one() {
        assert_eq!(
            Digest::of(b"").as_str(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn parse_refuses_other_text() {
        assert!(Digest::parse("sha256:abc").is_err());
        assert!(
            Digest::parse("md5:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
                .is_err()
        );
        assert!(Digest::parse(Digest::of(b"x").as_str()).is_ok());
    }
}
