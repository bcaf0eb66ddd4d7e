//! Readiness after an apply: Deployments, StatefulSets and DaemonSets rolled out, Jobs complete, CRDs
//! established — polled until ready, failed (a rollout past its progress deadline, a failed Job) or out
//! of time. PVCs are not waited for: with `WaitForFirstConsumer` storage they stay Pending until a pod
//! uses them, which is not a failure.

use super::error::EngineError;
use super::plan::{ActionKind, Plan};
use super::target::Connection;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How often readiness is polled.
const POLL: Duration = Duration::from_millis(100);

/// What a kind's status says.
#[derive(Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Done.
    Ready,
    /// Not yet, with why.
    Waiting(String),
    /// Will not become ready, with why.
    Failed(String),
}

fn condition<'a>(status: &'a Value, kind: &str) -> Option<&'a Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The readiness of one live object (kinds without a rule are ready once they exist).
pub fn readiness(object: &Value) -> Readiness {
    let kind = object["kind"].as_str().unwrap_or_default();
    let status = &object["status"];
    let generation = int(&object["metadata"]["generation"]);
    let observed = int(&status["observedGeneration"]);
    let replicas = object["spec"]["replicas"].as_i64().unwrap_or(1);
    match kind {
        "Deployment" => {
            if let Some(p) = condition(status, "Progressing")
                && p["reason"] == "ProgressDeadlineExceeded"
            {
                return Readiness::Failed(format!(
                    "rollout exceeded its progress deadline: {}",
                    p["message"].as_str().unwrap_or_default()
                ));
            }
            let updated = int(&status["updatedReplicas"]);
            let available = int(&status["availableReplicas"]);
            let total = int(&status["replicas"]);
            if observed >= generation
                && updated == replicas
                && available == replicas
                && total == replicas
            {
                Readiness::Ready
            } else {
                Readiness::Waiting(format!(
                    "{available}/{replicas} available, {updated} updated"
                ))
            }
        }
        "StatefulSet" => {
            let ready = int(&status["readyReplicas"]);
            let current = status["currentRevision"].as_str();
            let update = status["updateRevision"].as_str();
            if observed >= generation
                && ready == replicas
                && (update.is_none() || current == update)
            {
                Readiness::Ready
            } else {
                Readiness::Waiting(format!("{ready}/{replicas} ready"))
            }
        }
        "DaemonSet" => {
            let desired = int(&status["desiredNumberScheduled"]);
            let ready = int(&status["numberReady"]);
            let updated = int(&status["updatedNumberScheduled"]);
            if observed >= generation && ready == desired && updated == desired {
                Readiness::Ready
            } else {
                Readiness::Waiting(format!("{ready}/{desired} ready"))
            }
        }
        "Job" => {
            if condition(status, "Failed").is_some_and(|c| c["status"] == "True") {
                Readiness::Failed("the Job failed".into())
            } else if condition(status, "Complete").is_some_and(|c| c["status"] == "True") {
                Readiness::Ready
            } else {
                Readiness::Waiting("not complete".into())
            }
        }
        "CustomResourceDefinition" => {
            if condition(status, "Established").is_some_and(|c| c["status"] == "True") {
                Readiness::Ready
            } else {
                Readiness::Waiting("not established".into())
            }
        }
        _ => Readiness::Ready,
    }
}

/// When a wait of `timeout` from now ends; `None` when that instant is past what the clock can hold
/// (such a wait never times out, rather than overflowing).
pub fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// One readiness observation of one object, for progress displays (`-o json` deploy streams them as
/// `progress` events; a TTY shows a line per workload).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// `Kind/namespace/name`.
    pub object: String,
    /// Ready (available) replicas, or 1/0 for kinds without replicas.
    pub ready: i64,
    /// Desired replicas.
    pub desired: i64,
    /// Since the wait began.
    pub elapsed_ms: u64,
    /// Why it is not ready yet (empty once ready).
    pub waiting: String,
    /// Whether it is ready.
    pub done: bool,
}

/// Where progress goes.
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// Ready and desired counts of a live workload.
fn counts(object: &Value) -> (i64, i64) {
    let status = &object["status"];
    let desired = object["spec"]["replicas"].as_i64().unwrap_or(1);
    match object["kind"].as_str().unwrap_or_default() {
        "Deployment" => (int(&status["availableReplicas"]), desired),
        "StatefulSet" => (int(&status["readyReplicas"]), desired),
        "DaemonSet" => (
            int(&status["numberReady"]),
            int(&status["desiredNumberScheduled"]),
        ),
        _ => (i64::from(readiness(object) == Readiness::Ready), 1),
    }
}

/// The message of a condition that says why a rollout waits (Available/Progressing not True), if any.
fn stuck_reason(object: &Value) -> Option<String> {
    let conditions = object["status"]["conditions"].as_array()?;
    conditions
        .iter()
        .filter(|c| c["status"] != "True")
        .find_map(|c| {
            let reason = c["reason"].as_str().unwrap_or_default();
            let message = c["message"].as_str().unwrap_or_default();
            (!reason.is_empty() || !message.is_empty()).then(|| format!("{reason}: {message}"))
        })
}

/// Wait until every object the plan created, updated or adopted is ready.
pub async fn wait(conn: &Connection, plan: &Plan, timeout: Duration) -> Result<(), EngineError> {
    wait_with(conn, plan, timeout, None).await
}

/// [`wait`], reporting each observation to `progress`.
pub async fn wait_with(
    conn: &Connection,
    plan: &Plan,
    timeout: Duration,
    progress: Option<&ProgressFn>,
) -> Result<(), EngineError> {
    let started = Instant::now();
    let resources = conn.resources.clone();
    let deadline = deadline_after(timeout);
    let watched: Vec<_> = plan
        .actions
        .iter()
        .filter(|a| {
            matches!(
                a.action,
                ActionKind::Create | ActionKind::Update | ActionKind::Adopt | ActionKind::Replace
            )
        })
        .filter(|a| {
            matches!(
                a.object.kind.as_str(),
                "Deployment" | "StatefulSet" | "DaemonSet" | "Job" | "CustomResourceDefinition"
            )
        })
        .collect();
    for a in watched {
        let served = resources.served(&conn.client, &a.object.gvk()).await?;
        loop {
            let live = super::resources::read(
                &conn.client,
                &served,
                a.object.namespace.as_deref(),
                &a.object.name,
            )
            .await
            .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?;
            let state = match &live {
                Some(v) => readiness(v),
                None => Readiness::Failed("it no longer exists".into()),
            };
            if let (Some(report), Some(v)) = (progress, &live) {
                let (ready, desired) = counts(v);
                let waiting = match &state {
                    Readiness::Ready => String::new(),
                    Readiness::Waiting(why) | Readiness::Failed(why) => match stuck_reason(v) {
                        Some(reason) => format!("{why} ({reason})"),
                        None => why.clone(),
                    },
                };
                report(&Progress {
                    object: a.key().to_string(),
                    ready,
                    desired,
                    elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    waiting,
                    done: state == Readiness::Ready,
                });
            }
            match state {
                Readiness::Ready => break,
                Readiness::Failed(why) => {
                    return Err(EngineError::NotReady {
                        object: a.key(),
                        waited: None,
                        why,
                    });
                }
                Readiness::Waiting(why) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Err(EngineError::NotReady {
                        object: a.key(),
                        waited: Some(timeout.as_secs()),
                        why,
                    });
                }
                Readiness::Waiting(_) => tokio::time::sleep(POLL).await,
            }
        }
    }
    Ok(())
}

/// How long a CustomResourceDefinition written by a level may take to be established before the next
/// level (which may write its custom resources) starts.
pub const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(60);

/// Waits until the CustomResourceDefinition `name` is established and, when the `desired` CRD is given,
/// every version it serves answers: kube-apiserver serves a new CRD's kinds only once it is established,
/// and a version added to an established CRD a moment after the update (a custom resource written before
/// answers 404); the local cluster serves both at once.
pub async fn wait_established(
    conn: &Connection,
    resources: &super::resources::Resources,
    name: &str,
    desired: Option<&serde_json::Value>,
) -> Result<(), EngineError> {
    let deadline = Instant::now() + ESTABLISH_TIMEOUT;
    wait_condition(conn, resources, name, deadline).await?;
    for version in desired.map(served_versions).unwrap_or_default() {
        wait_version_served(conn, name, &version, deadline).await?;
    }
    Ok(())
}

/// The versions a CRD serves, as resources to list.
fn served_versions(crd: &serde_json::Value) -> Vec<kube::api::ApiResource> {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let names = &crd["spec"]["names"];
    crd.pointer("/spec/versions")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["served"] != false)
        .filter_map(|v| {
            let version = v["name"].as_str()?;
            Some(kube::api::ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                api_version: format!("{group}/{version}"),
                kind: names["kind"].as_str()?.to_string(),
                plural: names["plural"].as_str()?.to_string(),
            })
        })
        .collect()
}

/// Waits until a list of the CRD's `version` answers (not 404).
async fn wait_version_served(
    conn: &Connection,
    name: &str,
    resource: &kube::api::ApiResource,
    deadline: Instant,
) -> Result<(), EngineError> {
    let served = super::resources::Served {
        resource: resource.clone(),
        namespaced: false,
        pending_crd: false,
    };
    let one = kube::api::ListParams::default().limit(1);
    loop {
        match super::resources::list(&conn.client, &served, None, &one).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 && Instant::now() < deadline => {
                tokio::time::sleep(POLL).await;
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Err(EngineError::NotReady {
                    object: crate::identity::ObjectKey::new("CustomResourceDefinition", None, name),
                    waited: Some(ESTABLISH_TIMEOUT.as_secs()),
                    why: format!("version {} is not served", resource.version),
                });
            }
            Err(e) => {
                return Err(EngineError::cluster(
                    format!("listing {} {}", resource.api_version, resource.plural),
                    e,
                ));
            }
        }
    }
}

/// Waits until the CRD's `Established` condition is true.
async fn wait_condition(
    conn: &Connection,
    resources: &super::resources::Resources,
    name: &str,
    deadline: Instant,
) -> Result<(), EngineError> {
    let crd = crate::identity::gvk("apiextensions.k8s.io/v1", "CustomResourceDefinition");
    let served = resources.served(&conn.client, &crd).await?;
    loop {
        let live = super::resources::read(&conn.client, &served, None, name)
            .await
            .map_err(|e| {
                EngineError::cluster(format!("reading CustomResourceDefinition/{name}"), e)
            })?;
        let why = match live.as_ref().map(readiness) {
            Some(Readiness::Ready) => return Ok(()),
            Some(Readiness::Waiting(why) | Readiness::Failed(why)) => why,
            None => "it does not exist".to_string(),
        };
        if Instant::now() >= deadline {
            return Err(EngineError::NotReady {
                object: crate::identity::ObjectKey::new("CustomResourceDefinition", None, name),
                waited: Some(ESTABLISH_TIMEOUT.as_secs()),
                why: format!("not established: {why}"),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployment_rules() {
        let base = |status: Value| json!({"kind": "Deployment", "metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": status});
        assert_eq!(
            readiness(&base(
                json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2})
            )),
            Readiness::Ready
        );
        assert!(matches!(
            readiness(&base(
                json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2})
            )),
            Readiness::Waiting(_)
        ));
        let stuck = json!({"conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "slow"}]});
        assert!(matches!(readiness(&base(stuck)), Readiness::Failed(_)));
    }

    #[test]
    fn a_huge_timeout_has_no_deadline_instead_of_overflowing() {
        assert_eq!(deadline_after(Duration::MAX), None);
        assert_eq!(deadline_after(Duration::from_secs(u64::MAX)), None);
        assert!(deadline_after(Duration::from_secs(1)).is_some());
    }

    #[test]
    fn jobs_and_other_kinds() {
        let job = |c: &str| json!({"kind": "Job", "status": {"conditions": [{"type": c, "status": "True"}]}});
        assert_eq!(readiness(&job("Complete")), Readiness::Ready);
        assert!(matches!(readiness(&job("Failed")), Readiness::Failed(_)));
        assert_eq!(readiness(&json!({"kind": "ConfigMap"})), Readiness::Ready);
    }
}
