//! Approval seals: every approval row the journal writes carries a keyed BLAKE3 digest of what it approves
//! (plan hash, deploy run, kind, command, time) under the approving user's key, which lives outside the
//! state directory. Someone who can edit the state directory (the journal, the stored plans, the secret
//! digest key) but not that key cannot forge an approval: `resume` and `deploy --resume` carry out only a
//! row whose seal this user's key reproduces.
//!
//! The key: the file `PICELI_APPROVAL_KEY_FILE` names, else `$XDG_CONFIG_HOME/piceli/approval.key`, else
//! `~/.config/piceli/approval.key` — 32 random bytes as 64 hex digits, created (mode `0600`, its directory
//! `0700`) on the first approval. A team or a CI job that approves in one place and resumes in another
//! points both at the same key file.

use std::path::{Path, PathBuf};

use super::error::JournalError;
use super::types::ApprovalKind;

/// The environment variable naming the approval key file.
pub const KEY_FILE_ENV: &str = "PICELI_APPROVAL_KEY_FILE";

/// Whether an approval row's seal is this user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seal {
    /// This user's key reproduces it.
    Valid,
    /// The row has none (written before schema 5, or by hand).
    Missing,
    /// It does not match: the row was edited, or sealed with another key.
    Invalid,
    /// This user has no approval key yet, so no seal can be checked.
    NoKey,
}

impl Seal {
    /// Why a row with this seal is not trusted (`None`: it is).
    pub fn refusal(self) -> Option<String> {
        match self {
            Seal::Valid => None,
            Seal::Missing => Some(
                "the approval has no seal (it was written by hand, or into a journal older than schema 5, before approvals were sealed)"
                    .into(),
            ),
            Seal::Invalid => Some(format!(
                "the approval's seal does not match this user's approval key `{}` (the row was edited, or another key sealed it)",
                key_path().map_or_else(|_| "(none)".to_string(), |p| p.display().to_string())
            )),
            Seal::NoKey => Some(format!(
                "this user has no approval key (`{}` is missing), so no approval can be trusted",
                key_path().map_or_else(|_| "(none)".to_string(), |p| p.display().to_string())
            )),
        }
    }
}

/// The fields a seal covers.
pub(crate) struct Sealed<'a> {
    pub plan_hash: &'a str,
    pub run: Option<u64>,
    pub kind: ApprovalKind,
    pub command: &'a str,
    pub approved_at: &'a str,
}

/// A user's approval key (never printed).
#[derive(Clone)]
pub(crate) struct ApprovalKey([u8; 32]);

impl std::fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApprovalKey(..)")
    }
}

impl ApprovalKey {
    /// The seal of `fields`: a keyed digest of each field, length-prefixed so no two rows encode alike.
    pub fn seal(&self, fields: &Sealed<'_>) -> String {
        let mut hasher = blake3::Hasher::new_keyed(&self.0);
        let run = fields.run.map(|r| r.to_string()).unwrap_or_default();
        for part in [
            "piceli approval seal v1",
            fields.plan_hash,
            &run,
            fields.kind.as_str(),
            fields.command,
            fields.approved_at,
        ] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.finalize().to_hex().to_string()
    }

    /// Whether `seal` (a row's `seal` column) is this key's for `fields`.
    pub fn check(&self, seal: Option<&str>, fields: &Sealed<'_>) -> Seal {
        match seal {
            None => Seal::Missing,
            Some(seal) => {
                let want = blake3::Hash::from_hex(self.seal(fields)).ok();
                let got = blake3::Hash::from_hex(seal).ok();
                // blake3::Hash compares in constant time.
                match (want, got) {
                    (Some(want), Some(got)) if want == got => Seal::Valid,
                    _ => Seal::Invalid,
                }
            }
        }
    }

    /// The user's key, `None` when its file does not exist.
    pub fn load() -> Result<Option<ApprovalKey>, JournalError> {
        let path = key_path()?;
        match std::fs::read_to_string(&path) {
            Ok(text) => parse(&path, &text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(key_error(&path, format!("cannot read it: {e}"))),
        }
    }

    /// The user's key, created on first use: written into a private file beside it, then hard-linked into
    /// place, so two processes approving at once end with one key (the second reads the first's).
    pub fn load_or_create() -> Result<ApprovalKey, JournalError> {
        if let Some(key) = Self::load()? {
            return Ok(key);
        }
        let path = key_path()?;
        let dir = path
            .parent()
            .ok_or_else(|| key_error(&path, "it has no directory".into()))?;
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| key_error(&path, format!("cannot create `{}`: {e}", dir.display())))?;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| key_error(&path, format!("no random bytes for a new key: {e}")))?;
        let fresh = dir.join(format!(
            ".approval.key.new-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        let written = write_private(&fresh, &format!("{}\n", hex(&bytes)));
        let linked = written.and_then(|()| match std::fs::hard_link(&fresh, &path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        });
        let _ = std::fs::remove_file(&fresh);
        linked.map_err(|e| key_error(&path, format!("cannot create it: {e}")))?;
        Self::load()?
            .ok_or_else(|| key_error(&path, "it vanished right after it was created".into()))
    }
}

/// Where the user's approval key is.
pub fn key_path() -> Result<PathBuf, JournalError> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(file) = set(KEY_FILE_ENV) {
        return Ok(file);
    }
    if let Some(config) = set("XDG_CONFIG_HOME").filter(|p| p.is_absolute()) {
        return Ok(config.join("piceli").join("approval.key"));
    }
    match set("HOME") {
        Some(home) => Ok(home.join(".config").join("piceli").join("approval.key")),
        None => Err(JournalError::ApprovalKey {
            path: PathBuf::from("~/.config/piceli/approval.key"),
            detail: format!("neither {KEY_FILE_ENV}, XDG_CONFIG_HOME nor HOME is set"),
        }),
    }
}

fn key_error(path: &Path, detail: String) -> JournalError {
    JournalError::ApprovalKey {
        path: path.to_path_buf(),
        detail,
    }
}

fn parse(path: &Path, text: &str) -> Result<ApprovalKey, JournalError> {
    let text = text.trim();
    let bad = || key_error(path, "it is not 64 hex digits".into());
    if text.len() != 64 {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16)
            .map_err(|_| bad())?;
    }
    Ok(ApprovalKey(key))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(command: &str) -> Sealed<'_> {
        Sealed {
            plan_hash: "ab",
            run: Some(3),
            kind: ApprovalKind::Approved,
            command,
            approved_at: "2026-12-03T00:00:00Z",
        }
    }

    #[test]
    fn a_seal_covers_every_field_and_only_its_key_reproduces_it() {
        let key = ApprovalKey([7; 32]);
        let seal = key.seal(&fields("deploy --approve ab"));
        assert_eq!(
            key.check(Some(&seal), &fields("deploy --approve ab")),
            Seal::Valid
        );
        assert_eq!(
            key.check(Some(&seal), &fields("deploy --approve ac")),
            Seal::Invalid
        );
        let mut other = fields("deploy --approve ab");
        other.run = None;
        assert_eq!(key.check(Some(&seal), &other), Seal::Invalid);
        assert_eq!(
            ApprovalKey([8; 32]).check(Some(&seal), &fields("deploy --approve ab")),
            Seal::Invalid
        );
        assert_eq!(key.check(None, &fields("x")), Seal::Missing);
        assert_eq!(key.check(Some("not hex"), &fields("x")), Seal::Invalid);
    }

    #[test]
    fn a_key_file_must_be_64_hex_digits() {
        let p = Path::new("k");
        assert!(parse(p, &"0a".repeat(32)).is_ok());
        assert!(parse(p, &format!("{}\n", "0a".repeat(32))).is_ok());
        assert!(parse(p, "0a").is_err());
        assert!(parse(p, &"zz".repeat(32)).is_err());
        assert!(parse(p, &"é".repeat(32)).is_err());
    }
}
