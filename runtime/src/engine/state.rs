//! A target's state directory — its path, its journal, the plans stored in it and its keys — as one
//! value, apart from the cluster connection: what needs only the state (stored plans, hash prefixes,
//! releases, the journal identity) takes a [`StateDir`] and never a connection.

use super::error::EngineError;
use super::plan::Plan;
use crate::journal::{ApplyLock, Journal};
use std::path::PathBuf;

/// The shortest hash prefix `--approve` accepts.
pub const MIN_PREFIX: usize = 12;

/// An open state directory (`.piceli/<app>/<target>/` unless `--state-dir` says otherwise).
pub struct StateDir {
    /// Where it is.
    pub path: PathBuf,
    /// Its journal (`journal.db`).
    pub journal: Journal,
}

impl StateDir {
    /// Where a target's state lives unless `--state-dir` says otherwise: `.piceli/<app>/<target>/`.
    pub fn default_path(app: &str, target: &str) -> PathBuf {
        PathBuf::from(".piceli").join(app).join(target)
    }

    /// Open (creating it if needed) the state directory at `path` and its journal.
    pub fn open(path: PathBuf) -> Result<StateDir, EngineError> {
        let journal = Journal::open(&path)?;
        Ok(StateDir { path, journal })
    }

    /// Take the directory's apply lock (`apply.lock`) without waiting: held until the guard drops.
    pub fn lock(&self) -> Result<ApplyLock, EngineError> {
        Ok(Journal::lock(&self.path)?)
    }

    /// The key that makes secret digests this directory's own (created on first use, mode 0600).
    pub fn digest_key(&self) -> Result<[u8; 32], EngineError> {
        super::secrets::digest_key(&self.path)
    }

    /// This directory's journal identity as the cluster Lease records it: a keyed digest of its
    /// secret-digest key (never the key).
    pub fn journal_id(&self) -> Result<String, EngineError> {
        let key = self.digest_key()?;
        let id = blake3::keyed_hash(&key, b"piceli journal identity").to_hex();
        Ok(id[..16].to_string())
    }

    /// The full hash of the stored plan `given` names: the whole hash, or a unique prefix of at least
    /// [`MIN_PREFIX`] hex digits.
    pub fn resolve_hash(&self, given: &str) -> Result<String, EngineError> {
        let hash = given.trim().to_ascii_lowercase();
        if hash.len() < MIN_PREFIX
            || hash.len() > 64
            || !hash.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(EngineError::BadHash(given.to_string()));
        }
        let mut found = self.journal.plan_hashes_starting_with(&hash, 10)?;
        match found.len() {
            0 => Err(EngineError::UnknownPlan(given.to_string())),
            1 => Ok(found.remove(0)),
            _ => Err(EngineError::AmbiguousHash {
                prefix: given.to_string(),
                matches: found,
            }),
        }
    }

    /// Store a plan under its hash: the one place plans are written ([`StateDir::stored_plan`] is the one
    /// place they are read).
    pub fn store_plan(&self, plan: &Plan) -> Result<(), EngineError> {
        let json = serde_json::to_string(plan)
            .map_err(|e| EngineError::StateDir(format!("cannot encode the plan: {e}")))?;
        self.journal.save_plan(&plan.hash, &plan.target, &json)?;
        Ok(())
    }

    /// The plan stored under `hash`, verified as content: it parses, it is stored under its own hash,
    /// and its content hashes to `hash`. Whose plan it is (app, target, namespace) is the session's
    /// check ([`super::session::Session::approved_plan`]).
    pub fn stored_plan(&self, hash: &str) -> Result<Plan, EngineError> {
        let json = self
            .journal
            .load_plan(hash)?
            .ok_or_else(|| EngineError::UnknownPlan(hash.to_string()))?;
        Plan::from_stored(hash, &json)
    }
}

impl Plan {
    /// A plan as read back from a state directory (`json`, stored under `hash`), verified as content: it
    /// parses, it says it is `hash`, and its content hashes to `hash`. Anything else is
    /// [`EngineError::PlanTampered`] (never a panic: the state directory is outside input).
    pub fn from_stored(hash: &str, json: &str) -> Result<Plan, EngineError> {
        let tampered = |reason: String| EngineError::PlanTampered {
            hash: hash.to_string(),
            reason,
        };
        let plan: Plan =
            serde_json::from_str(json).map_err(|e| tampered(format!("cannot be read ({e})")))?;
        if plan.hash != hash {
            return Err(tampered(format!("says its hash is `{}`", plan.hash)));
        }
        let computed = plan.compute_hash();
        if computed != hash {
            return Err(tampered(format!(
                "was edited after approval: its content hashes to `{computed}`"
            )));
        }
        Ok(plan)
    }
}
