//! Approval guards: a stored plan is used only when its content hashes to the approved hash, for the
//! target and namespace it was made for, and (for a running release) when the cluster's apply Lease
//! records the same hash; the approval the journal records for every plan carried out (checked before an
//! apply, a resume and a push); and the cluster lock every apply and resume holds.

use super::error::EngineError;
use super::lock::{Holder, LockSlot, Running, recorded_running};
use super::plan::Plan;
use super::secrets::digest_key;
use super::session::Session;
use crate::journal::{Approval, Release};

/// The shortest hash prefix `--approve` accepts.
pub const MIN_PREFIX: usize = 12;

impl Session {
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

    /// The plan stored under `hash`, verified: it parses, it is stored under its own hash, its content
    /// hashes to `hash`, and it was made for this app, target and namespace.
    pub fn approved_plan(&self, hash: &str) -> Result<Plan, EngineError> {
        let tampered = |reason: String| EngineError::PlanTampered {
            hash: hash.to_string(),
            reason,
        };
        let json = self
            .journal
            .load_plan(hash)?
            .ok_or_else(|| EngineError::UnknownPlan(hash.to_string()))?;
        let plan: Plan =
            serde_json::from_str(&json).map_err(|e| tampered(format!("cannot be read ({e})")))?;
        if plan.hash != hash {
            return Err(tampered(format!("says its hash is `{}`", plan.hash)));
        }
        let computed = plan.compute_hash();
        if computed != hash {
            return Err(tampered(format!(
                "was edited after approval: its content hashes to `{computed}`"
            )));
        }
        if plan.app != self.app.name.v {
            return Err(tampered(format!("is a plan of app `{}`", plan.app)));
        }
        let namespace = self.namespace();
        if plan.target != self.target.name.v || plan.namespace != namespace {
            return Err(EngineError::WrongTarget {
                planned_target: plan.target,
                planned_namespace: plan.namespace,
                target: self.target.name.v.clone(),
                namespace,
            });
        }
        Ok(plan)
    }

    /// This state directory's journal identity as the cluster Lease records it: a keyed digest of its
    /// secret-digest key (never the key).
    pub fn journal_id(&self) -> Result<String, EngineError> {
        let key = digest_key(&self.state_dir)?;
        let id = blake3::keyed_hash(&key, b"piceli journal identity").to_hex();
        Ok(id[..16].to_string())
    }

    /// The running release's plan, verified as [`Session::approved_plan`] does and against what the
    /// cluster's apply Lease records for this journal: someone who edited the plan and the release's hash
    /// in the state directory cannot make `resume` apply it.
    pub async fn running_plan(&self, release: &Release) -> Result<Plan, EngineError> {
        let plan = self.approved_plan(&release.plan_hash)?;
        let journal = self.journal_id()?;
        let recorded =
            recorded_running(&self.conn, &plan.namespace, &self.app.name.v, &journal).await?;
        let Some(recorded) = recorded else {
            return Ok(plan);
        };
        let mismatch = if recorded.release == release.number {
            (recorded.plan != release.plan_hash).then(|| {
                format!(
                    "is not what release {} approved: the cluster's apply Lease records plan `{}`",
                    release.number, recorded.plan
                )
            })
        } else {
            let known = self
                .journal
                .release(crate::journal::ReleaseId(recorded.release))?;
            known.is_none().then(|| {
                format!(
                    "belongs to a release the cluster does not know: its apply Lease records release {} (plan `{}`), which this journal lacks",
                    recorded.release, recorded.plan
                )
            })
        };
        match mismatch {
            Some(reason) => Err(EngineError::PlanTampered {
                hash: release.plan_hash.clone(),
                reason,
            }),
            None => Ok(plan),
        }
    }

    /// The cluster lock for applying `plan` as release `release`.
    pub fn lock_slot(&self, plan: &Plan, release: u64) -> Result<LockSlot, EngineError> {
        Ok(LockSlot::new(
            &self.conn,
            &plan.namespace,
            &self.app.name.v,
            Holder::this_process(&self.journal_id()?),
            Running {
                release,
                plan: plan.hash.clone(),
            },
            self.wait_lock,
        ))
    }
}

impl Session {
    /// The approval that lets `what` carry out the stored plan `hash`: bound to deploy run `run` when
    /// given (any kind: a run of a plan with no changes is carried out `unchanged`), else one allowing
    /// writes. None recorded: [`EngineError::NotApproved`].
    pub fn require_approval(
        &self,
        what: &str,
        hash: &str,
        run: Option<u64>,
    ) -> Result<Approval, EngineError> {
        self.journal
            .approval(hash, run)?
            .ok_or_else(|| EngineError::NotApproved {
                what: what.to_string(),
                hash: hash.to_string(),
                run,
            })
    }
}
