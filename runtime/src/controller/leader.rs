//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it: the holder renews the
//! Lease every retry period; a candidate takes it once the record has not changed for a whole lease
//! duration by its own clock (no clock comparison between machines), or when it was released. Writes
//! carry the read resourceVersion, so two candidates never both win.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::time::Instant;

/// How the Lease is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElection {
    /// The Lease's name (in the operator's namespace).
    pub lease_name: String,
    /// How long a Lease is valid without renewal; a standby takes over at most this long after the
    /// holder stopped renewing.
    pub lease_duration: Duration,
    /// How long the holder keeps leading while renewals fail, before it stops reconciling.
    pub renew_deadline: Duration,
    /// How often the holder renews, and a candidate tries.
    pub retry_period: Duration,
}

impl LeaderElection {
    /// The defaults of controller-runtime: 15 s lease, 10 s renew deadline, 2 s retry period.
    pub fn new(lease_name: impl Into<String>) -> Self {
        LeaderElection {
            lease_name: lease_name.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// What a candidate last saw of the Lease, and when (by its own clock).
struct Observed {
    record: (Option<String>, Option<MicroTime>, Option<i32>),
    at: Instant,
}

/// One process's side of the election.
pub(crate) struct Elector {
    api: Api<Lease>,
    config: LeaderElection,
    identity: String,
    observed: Option<Observed>,
}

fn record_of(spec: &LeaseSpec) -> (Option<String>, Option<MicroTime>, Option<i32>) {
    (
        spec.holder_identity.clone().filter(|h| !h.is_empty()),
        spec.renew_time.clone(),
        spec.lease_transitions,
    )
}

fn seconds(d: Duration) -> i32 {
    i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX)
}

impl Elector {
    pub fn new(client: Client, namespace: &str, config: LeaderElection, identity: &str) -> Self {
        Elector {
            api: Api::namespaced(client, namespace),
            config,
            identity: identity.to_string(),
            observed: None,
        }
    }

    pub fn config(&self) -> &LeaderElection {
        &self.config
    }

    /// One attempt to take or renew the Lease: `Ok(true)` while we hold it.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = MicroTime(Timestamp::now());
        let Some(lease) = self.api.get_opt(&self.config.lease_name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.lease_name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now.clone(), now, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let record = record_of(&spec);
        let changed = self.observed.as_ref().is_none_or(|o| o.record != record);
        if changed {
            self.observed = Some(Observed {
                record: record.clone(),
                at: Instant::now(),
            });
        }
        let holder = record.0.as_deref();
        let ours = holder == Some(self.identity.as_str());
        let duration = spec
            .lease_duration_seconds
            .map(|s| Duration::from_secs(u64::try_from(s).unwrap_or(0)))
            .unwrap_or(self.config.lease_duration);
        let expired = self
            .observed
            .as_ref()
            .is_some_and(|o| o.at.elapsed() >= duration);
        if !ours && holder.is_some() && !expired {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0) + i32::from(!ours);
        let acquired = if ours {
            spec.acquire_time.clone().unwrap_or_else(|| now.clone())
        } else {
            now.clone()
        };
        let mut next = lease.clone();
        next.spec = Some(self.spec(acquired, now, transitions));
        match self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &next)
            .await
        {
            Ok(written) => {
                self.observed = written.spec.as_ref().map(|s| Observed {
                    record: record_of(s),
                    at: Instant::now(),
                });
                Ok(true)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Gives the Lease up (on shutdown), so a standby takes over at once.
    pub async fn release(&mut self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.config.lease_name).await? else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        // A 409 means someone else wrote it: it is not ours to release any more.
        match self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn spec(&self, acquired: MicroTime, renewed: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds(self.config.lease_duration)),
            acquire_time: Some(acquired),
            renew_time: Some(renewed),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}
