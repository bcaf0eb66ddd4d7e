//! Approval guards: a stored plan is used only when its content hashes to the approved hash, for the
//! target and namespace it was made for, and (for a running release) when the cluster's apply Lease
//! records the same hash; the approval the journal records for every plan carried out (checked before an
//! apply, a resume and a push); and the cluster lock every apply and resume holds.

use super::error::EngineError;
use super::lock::{Holder, LockSlot, Running, recorded_running};
use super::plan::Plan;
use super::session::Session;
use crate::journal::{Approval, Release};

/// The shortest hash prefix `--approve` accepts.
pub use super::state::MIN_PREFIX;

impl Session {
    /// The full hash of the stored plan `given` names ([`super::state::StateDir::resolve_hash`]).
    pub fn resolve_hash(&self, given: &str) -> Result<String, EngineError> {
        self.state.resolve_hash(given)
    }

    /// The plan stored under `hash`, verified: its content hashes to `hash`
    /// ([`super::state::StateDir::stored_plan`]) and it was made for this app, target and namespace.
    pub fn approved_plan(&self, hash: &str) -> Result<Plan, EngineError> {
        let plan = self.state.stored_plan(hash)?;
        if plan.app != self.app.name.v {
            return Err(EngineError::PlanTampered {
                hash: hash.to_string(),
                reason: format!("is a plan of app `{}`", plan.app),
            });
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

    /// The running release's plan, verified as [`Session::approved_plan`] does and against what the
    /// cluster's apply Lease records for this journal: someone who edited the plan and the release's hash
    /// in the state directory cannot make `resume` apply it.
    pub async fn running_plan(&self, release: &Release) -> Result<Plan, EngineError> {
        let plan = self.approved_plan(&release.plan_hash)?;
        let journal = self.state.journal_id()?;
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
                .state
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
            Holder::this_process(&self.state.journal_id()?),
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
    /// writes. None recorded: [`EngineError::NotApproved`]; none sealed by this user's approval key (a
    /// row planted or edited in the journal, or sealed with another key): [`EngineError::ApprovalUnsealed`].
    pub fn require_approval(
        &self,
        what: &str,
        hash: &str,
        run: Option<u64>,
    ) -> Result<Approval, EngineError> {
        let approval =
            self.state
                .journal
                .approval(hash, run)?
                .ok_or_else(|| EngineError::NotApproved {
                    what: what.to_string(),
                    hash: hash.to_string(),
                    run,
                })?;
        match approval.seal.refusal() {
            None => Ok(approval),
            Some(reason) => Err(EngineError::ApprovalUnsealed {
                what: what.to_string(),
                hash: hash.to_string(),
                reason,
            }),
        }
    }
}
