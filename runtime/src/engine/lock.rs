//! The cluster-side apply lock: a `coordination.k8s.io/v1` Lease per app and namespace, so one apply
//! runs per target across machines and state directories (the file lock only covers one state dir).
//!
//! The Lease `piceli-apply-<app>` names its holder (`host/pid/journal`), is renewed while the apply runs,
//! expires when the holder dies without releasing it, and is released at the end. While a release of a
//! journal is unfinished, the Lease also carries that release's number and approved plan hash, so a
//! `resume` from a state directory whose plan or hash was edited is refused (see docs/commands.md, "What
//! the state directory is trusted for").

use super::error::EngineError;
use super::target::Connection;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ObjectMeta, PostParams};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a Lease is valid without renewal.
pub const LEASE_SECONDS: i32 = 15;
/// How often the holder renews it.
const RENEW_EVERY: Duration = Duration::from_secs(5);
/// How often a `--wait-lock` apply looks again.
const POLL_EVERY: Duration = Duration::from_millis(500);
/// The annotation naming the journal release the Lease's holder is applying (or left unfinished).
pub const RELEASE_ANNOTATION: &str = "piceli.dev/release";
/// The annotation carrying that release's approved plan hash.
pub const PLAN_ANNOTATION: &str = "piceli.dev/plan";
/// The annotation naming the journal (state directory) of that release.
pub const JOURNAL_ANNOTATION: &str = "piceli.dev/journal";

/// The Lease's name for an app.
pub fn lease_name(app: &str) -> String {
    format!("piceli-apply-{app}")
}

/// Who is applying: enough to tell a person where the lock is held, and to recognise our own journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The host name.
    pub host: String,
    /// The process.
    pub pid: u32,
    /// The journal's identity (a digest of the state directory's key, never the key).
    pub journal: String,
}

impl Holder {
    /// This process, applying from the journal `journal`.
    pub fn this_process(journal: &str) -> Holder {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown-host".into());
        Holder {
            host,
            pid: std::process::id(),
            journal: journal.to_string(),
        }
    }

    /// `host/pid/journal`, as stored in `spec.holderIdentity`.
    pub fn identity(&self) -> String {
        format!("{}/{}/{}", self.host, self.pid, self.journal)
    }

    /// Parses an identity written by [`Holder::identity`] (`None` for another tool's).
    pub fn parse(identity: &str) -> Option<Holder> {
        let mut parts = identity.rsplitn(3, '/');
        let journal = parts.next()?.to_string();
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_string();
        Some(Holder { host, pid, journal })
    }
}

/// The release an apply is running, recorded on the Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The journal release number.
    pub release: u64,
    /// Its approved plan hash.
    pub plan: String,
}

/// A held cluster lock. Renewed in the background until [`ClusterLock::release`]; dropped without
/// releasing (a kill), it expires after [`LEASE_SECONDS`].
pub struct ClusterLock {
    api: Api<Lease>,
    name: String,
    holder: Holder,
    lost: Arc<AtomicBool>,
    renewer: tokio::task::JoinHandle<()>,
}

/// What `acquire` found.
pub enum Acquired {
    /// The lock is ours.
    Held(Box<ClusterLock>),
    /// The namespace does not exist yet (the plan creates it): take the lock once it does.
    NoNamespace,
}

fn now() -> MicroTime {
    MicroTime(Timestamp::now())
}

fn annotations(lease: &Lease) -> BTreeMap<String, String> {
    lease.metadata.annotations.clone().unwrap_or_default()
}

/// The unfinished release a Lease records for the journal `journal`, if any.
pub fn running_of(lease: &Lease, journal: &str) -> Option<Running> {
    let a = annotations(lease);
    if a.get(JOURNAL_ANNOTATION).map(String::as_str) != Some(journal) {
        return None;
    }
    Some(Running {
        release: a.get(RELEASE_ANNOTATION)?.parse().ok()?,
        plan: a.get(PLAN_ANNOTATION)?.clone(),
    })
}

/// Whether the Lease is free for `me`: no holder, expired, ours, or held by a process of our own journal
/// that is gone (we hold the state directory's file lock, so that holder cannot be running).
fn free_for(lease: &Lease, me: &Holder) -> bool {
    let Some(spec) = &lease.spec else { return true };
    let Some(identity) = spec.holder_identity.as_deref().filter(|h| !h.is_empty()) else {
        return true;
    };
    if let Some(holder) = Holder::parse(identity)
        && holder.journal == me.journal
    {
        return true;
    }
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(LEASE_SECONDS));
    match &spec.renew_time {
        Some(MicroTime(renewed)) => {
            let expires = renewed.saturating_add(SignedDuration::from_secs(duration));
            match expires {
                Ok(expires) => expires < Timestamp::now(),
                Err(_) => true,
            }
        }
        None => true,
    }
}

/// Who holds the Lease and since when, for the refusal.
fn describe(lease: &Lease) -> (String, String) {
    let spec = lease.spec.clone().unwrap_or_default();
    let holder = spec.holder_identity.unwrap_or_default();
    let since = spec
        .acquire_time
        .map(|MicroTime(t)| t.to_string())
        .unwrap_or_default();
    (holder, since)
}

/// Take the apply lock of `app` in `namespace`, recording `running` on it. Without `wait`, a lock held by
/// another live apply is refused ([`EngineError::ClusterLocked`]); with it, polled until free or `wait`
/// passes.
pub async fn acquire(
    conn: &Connection,
    namespace: &str,
    app: &str,
    me: &Holder,
    running: &Running,
    wait: Option<Duration>,
) -> Result<Acquired, EngineError> {
    let api: Api<Lease> = Api::namespaced(conn.client.clone(), namespace);
    let name = lease_name(app);
    let deadline = wait.map(|w| tokio::time::Instant::now() + w);
    let fail =
        |e: kube::Error| EngineError::cluster(format!("taking the apply lock Lease/{name}"), e);
    loop {
        let found = api.get_opt(&name).await.map_err(fail)?;
        let attempt = match found {
            None => {
                let lease = new_lease(&name, me, running, 0);
                match api.create(&PostParams::default(), &lease).await {
                    Ok(_) => true,
                    Err(kube::Error::Api(s)) if s.code == 409 => false,
                    Err(kube::Error::Api(s))
                        if s.code == 404 || (s.code == 403 && s.message.contains("terminat")) =>
                    {
                        return Ok(Acquired::NoNamespace);
                    }
                    Err(e) => return Err(fail(e)),
                }
            }
            Some(lease) if free_for(&lease, me) => {
                let transitions = lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.lease_transitions)
                    .unwrap_or(0);
                let mut next = new_lease(&name, me, running, transitions.saturating_add(1));
                next.metadata.resource_version = lease.metadata.resource_version.clone();
                next.metadata.annotations = Some(with_running(annotations(&lease), me, running));
                match api.replace(&name, &PostParams::default(), &next).await {
                    Ok(_) => true,
                    Err(kube::Error::Api(s)) if s.code == 409 => false,
                    Err(e) => return Err(fail(e)),
                }
            }
            Some(lease) => {
                let (holder, since) = describe(&lease);
                match deadline {
                    Some(d) if tokio::time::Instant::now() < d => false,
                    _ => {
                        return Err(EngineError::ClusterLocked {
                            lease: format!("{namespace}/{name}"),
                            holder,
                            since,
                        });
                    }
                }
            }
        };
        if attempt {
            return Ok(Acquired::Held(Box::new(ClusterLock::start(
                api,
                name,
                me.clone(),
            ))));
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// The unfinished release the cluster's Lease records for `journal` (`None`: no Lease, or none recorded).
pub async fn recorded_running(
    conn: &Connection,
    namespace: &str,
    app: &str,
    journal: &str,
) -> Result<Option<Running>, EngineError> {
    let api: Api<Lease> = Api::namespaced(conn.client.clone(), namespace);
    let name = lease_name(app);
    match api.get_opt(&name).await {
        Ok(found) => Ok(found.and_then(|l| running_of(&l, journal))),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
        Err(e) => Err(EngineError::cluster(format!("reading Lease/{name}"), e)),
    }
}

fn with_running(
    mut annotations: BTreeMap<String, String>,
    me: &Holder,
    running: &Running,
) -> BTreeMap<String, String> {
    annotations.insert(JOURNAL_ANNOTATION.into(), me.journal.clone());
    annotations.insert(RELEASE_ANNOTATION.into(), running.release.to_string());
    annotations.insert(PLAN_ANNOTATION.into(), running.plan.clone());
    annotations
}

fn new_lease(name: &str, me: &Holder, running: &Running, transitions: i32) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([
                ("app.kubernetes.io/managed-by".into(), "piceli".into()),
                ("app.kubernetes.io/component".into(), "apply-lock".into()),
            ])),
            annotations: Some(with_running(BTreeMap::new(), me, running)),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(me.identity()),
            lease_duration_seconds: Some(LEASE_SECONDS),
            acquire_time: Some(now()),
            renew_time: Some(now()),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }),
    }
}

/// The lock of one apply or resume: taken before its preconditions are checked when the namespace
/// exists, or right after the plan's first level created it; checked before every level.
pub struct LockSlot {
    conn: Connection,
    namespace: String,
    app: String,
    holder: Holder,
    running: Running,
    wait: Option<Duration>,
    held: tokio::sync::Mutex<Option<Box<ClusterLock>>>,
}

impl LockSlot {
    /// A slot for `running` of `app` in `namespace` (nothing is taken yet).
    pub fn new(
        conn: &Connection,
        namespace: &str,
        app: &str,
        holder: Holder,
        running: Running,
        wait: Option<Duration>,
    ) -> LockSlot {
        LockSlot {
            conn: conn.clone(),
            namespace: namespace.to_string(),
            app: app.to_string(),
            holder,
            running,
            wait,
            held: tokio::sync::Mutex::new(None),
        }
    }

    /// Hold the lock from here on: take it if not yet held (still pending while the namespace does not
    /// exist), or confirm it was not lost.
    pub async fn ensure(&self) -> Result<(), EngineError> {
        let mut held = self.held.lock().await;
        if let Some(lock) = held.as_ref() {
            return lock.ensure_held();
        }
        let acquired = acquire(
            &self.conn,
            &self.namespace,
            &self.app,
            &self.holder,
            &self.running,
            self.wait,
        )
        .await?;
        if let Acquired::Held(lock) = acquired {
            *held = Some(lock);
        }
        Ok(())
    }

    /// Whether the lock is held (it is not yet while the namespace does not exist).
    pub async fn is_held(&self) -> bool {
        self.held.lock().await.is_some()
    }

    /// Take the lock, waiting for it at least `at_least`; a namespace that does not exist is an error
    /// here (see `first_apply`, which has just created it).
    pub async fn take_within(&self, at_least: Duration) -> Result<(), EngineError> {
        let mut held = self.held.lock().await;
        if let Some(lock) = held.as_ref() {
            return lock.ensure_held();
        }
        let wait = Some(self.wait.map_or(at_least, |w| w.max(at_least)));
        match acquire(
            &self.conn,
            &self.namespace,
            &self.app,
            &self.holder,
            &self.running,
            wait,
        )
        .await?
        {
            Acquired::Held(lock) => {
                *held = Some(lock);
                Ok(())
            }
            Acquired::NoNamespace => Err(EngineError::Precondition {
                object: crate::identity::ObjectKey::new("Namespace", None, &self.namespace),
                drift: super::error::Drift::DeletedWhileCreated,
            }),
        }
    }

    /// Release it (see [`ClusterLock::release`]).
    pub async fn release(self, finished: bool) {
        if let Some(lock) = self.held.into_inner() {
            lock.release(finished).await;
        }
    }
}

impl ClusterLock {
    fn start(api: Api<Lease>, name: String, holder: Holder) -> ClusterLock {
        let lost = Arc::new(AtomicBool::new(false));
        let renewer = tokio::spawn(renew(
            api.clone(),
            name.clone(),
            holder.clone(),
            lost.clone(),
        ));
        ClusterLock {
            api,
            name,
            holder,
            lost,
            renewer,
        }
    }

    /// Refuse to go on when another apply took the Lease over (we failed to renew it in time).
    pub fn ensure_held(&self) -> Result<(), EngineError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(EngineError::ClusterLocked {
                lease: self.name.clone(),
                holder: "another apply (this one could not renew its Lease in time)".into(),
                since: String::new(),
            });
        }
        Ok(())
    }

    /// Release the lock. `finished`: the release ended (succeeded, failed or abandoned), so the Lease no
    /// longer records it; otherwise (interrupted, resumable) the record stays for `resume` to verify.
    pub async fn release(self, finished: bool) {
        self.renewer.abort();
        let Ok(Some(mut lease)) = self.api.get_opt(&self.name).await else {
            return;
        };
        let ours = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            == Some(self.holder.identity().as_str());
        if !ours {
            return;
        }
        if let Some(spec) = lease.spec.as_mut() {
            spec.holder_identity = None;
            spec.renew_time = Some(now());
        }
        if finished {
            let mut a = annotations(&lease);
            for key in [JOURNAL_ANNOTATION, RELEASE_ANNOTATION, PLAN_ANNOTATION] {
                a.remove(key);
            }
            lease.metadata.annotations = Some(a);
        }
        // Best effort: an unreleased Lease expires on its own.
        let _ = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await;
    }
}

impl Drop for ClusterLock {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

/// Renew the Lease every [`RENEW_EVERY`]; mark it lost when someone else holds it.
async fn renew(api: Api<Lease>, name: String, holder: Holder, lost: Arc<AtomicBool>) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let Ok(Some(mut lease)) = api.get_opt(&name).await else {
            continue;
        };
        let ours = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            == Some(holder.identity().as_str());
        if !ours {
            lost.store(true, Ordering::SeqCst);
            return;
        }
        if let Some(spec) = lease.spec.as_mut() {
            spec.renew_time = Some(now());
        }
        // A conflict means someone wrote it meanwhile: the next round reads it again.
        let _ = api.replace(&name, &PostParams::default(), &lease).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_identity_round_trips() {
        let h = Holder {
            host: "build-1.example".into(),
            pid: 4242,
            journal: "0123456789abcdef".into(),
        };
        assert_eq!(Holder::parse(&h.identity()), Some(h));
        assert_eq!(Holder::parse("kube-controller-manager"), None);
    }

    fn lease(holder: &str, renewed_secs_ago: i64) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(LEASE_SECONDS),
                renew_time: Some(MicroTime(
                    Timestamp::now()
                        .checked_sub(SignedDuration::from_secs(renewed_secs_ago))
                        .expect("time"),
                )),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        }
    }

    #[test]
    fn a_live_foreign_holder_keeps_it_an_expired_one_does_not() {
        let me = Holder {
            host: "a".into(),
            pid: 1,
            journal: "j1".into(),
        };
        assert!(!free_for(&lease("b/2/j2", 1), &me));
        assert!(free_for(&lease("b/2/j2", 60), &me));
        // A holder from our own journal is a dead process of ours: we hold the state dir's file lock.
        assert!(free_for(&lease("a/9/j1", 1), &me));
        assert!(free_for(&Lease::default(), &me));
    }
}
