//! A replace step's first half: the old object backed up in the journal, deleted with the plan's propagation,
//! and gone before the new one is created.

use super::*;

/// How long a replace waits for the object it deleted to be gone (finalizers may hold it).
pub(super) const REPLACE_GONE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Records the backup of the object a replace step deletes (see [`crate::journal::Backup`]): the live
/// object, if it is still the one the plan saw (its uid), without status and server-managed metadata,
/// secret values as digests. Nothing to back up when it is gone or another object has its name (a resumed
/// run: the first run backed it up).
pub(super) async fn back_up(
    step: &Step<'_>,
    index: u32,
    served: &crate::engine::resources::Served,
    a: &Action,
) -> Result<(), EngineError> {
    let Some(uid) = a.precondition.as_ref().map(|p| p.uid.as_str()) else {
        return Ok(());
    };
    let live = crate::engine::resources::read(
        &step.conn.client,
        served,
        a.object.namespace.as_deref(),
        &a.object.name,
    )
    .await
    .map_err(|e| EngineError::cluster(format!("reading {} to back it up", a.key()), e))?;
    let Some(live) = live.filter(|l| l["metadata"]["uid"].as_str() == Some(uid)) else {
        return Ok(());
    };
    let normalized = crate::engine::diff::normalize(&live);
    let object = redact(&normalized, step.key);
    step.journal.record_backup(
        step.release,
        index,
        &a.object.kind,
        a.object.namespace.as_deref(),
        &a.object.name,
        uid,
        &object,
    )?;
    checkpoint(step.hook, &format!("step {index} backed up"))
}

/// The first half of a replace: delete the object the plan saw (its uid) with the plan's propagation
/// policy, then wait until it is gone. `Background` for most kinds: for a finished Job, its pods no
/// longer run, so nothing of the old and the new Job runs at once, and the new Job need not wait for the
/// garbage collector to delete every old pod (Foreground keeps the Job, and so its name, until then);
/// without a policy, a batch/v1 Job's pods would be orphaned. `Orphan` for a StatefulSet: its pods and
/// PersistentVolumeClaims stay for the new one. Done already when the object is missing, or another
/// object of that name is there (the interrupted run created it).
pub(super) async fn clear_for_replace(
    step: &Step<'_>,
    api: &kube::Api<DynamicObject>,
    served: &crate::engine::resources::Served,
    a: &Action,
) -> Result<(), WriteError> {
    let Some(uid) = a.precondition.as_ref().map(|p| p.uid.clone()) else {
        return Err(WriteError::Rejected(format!(
            "{} has no planned object to replace",
            a.key()
        )));
    };
    // The checked resourceVersion on a first run (a resume cannot know it).
    let mut rv = if step.optimistic {
        step.rvs.get(&a.key()).cloned()
    } else {
        None
    };
    let mut attempts = crate::retry::Policy::WRITES.start();
    let mut conflicts = 0;
    let retry = |e: &kube::Error,
                 attempts: &mut crate::retry::Attempts|
     -> Result<std::time::Duration, WriteError> {
        if !is_transient(e) {
            return Err(WriteError::Rejected(
                crate::engine::cluster_error::classify(e).1,
            ));
        }
        let attempt = attempts.attempt();
        attempts.next().ok_or_else(|| {
            WriteError::Transient(format!(
                "{} (after {attempt} attempts)",
                crate::engine::cluster_error::classify(e).1
            ))
        })
    };
    loop {
        let live = match api.get_opt(&a.object.name).await {
            Ok(live) => live,
            Err(e) => {
                tokio::time::sleep(retry(&e, &mut attempts)?).await;
                continue;
            }
        };
        match live {
            None => return Ok(()),
            Some(o) if o.metadata.uid.as_deref() != Some(uid.as_str()) => return Ok(()),
            Some(o) if o.metadata.deletion_timestamp.is_some() => break,
            Some(_) => {}
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.clone()),
                resource_version: rv.clone(),
            }),
            ..match a.propagation {
                Some(crate::engine::replace::Propagation::Orphan) => DeleteParams::orphan(),
                Some(crate::engine::replace::Propagation::Background) | None => {
                    DeleteParams::background()
                }
            }
        };
        match api.delete(&a.object.name, &params).await {
            Ok(_) => break,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            // The uid precondition failed (another object now: the loop sees it), or the resourceVersion
            // did: a controller wrote (status); the delete goes ahead only if what the plan saw holds.
            Err(kube::Error::Api(s)) if s.code == 409 => {
                conflicts += 1;
                if conflicts > CONFLICT_RETRIES {
                    return Err(WriteError::Transient(format!(
                        "the object kept changing while it was deleted ({conflicts} conflicts)"
                    )));
                }
                if rv.is_some() {
                    match unchanged_since_plan(step, served, a).await {
                        Some(now) => rv = Some(now),
                        None => {
                            return Err(WriteError::Rejected(
                                "the object was changed since the plan (the server refused the delete \
                                 with HTTP 409); nothing of it was written: plan again"
                                    .to_string(),
                            ));
                        }
                    }
                }
            }
            Err(e) => tokio::time::sleep(retry(&e, &mut attempts)?).await,
        }
    }
    // Gone when it is missing or another object has its name.
    let deadline = tokio::time::Instant::now() + REPLACE_GONE_WAIT;
    loop {
        match api.get_opt(&a.object.name).await {
            Ok(None) => return Ok(()),
            Ok(Some(o)) if o.metadata.uid.as_deref() != Some(uid.as_str()) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => {
                return Err(WriteError::Rejected(
                    crate::engine::cluster_error::classify(&e).1,
                ));
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(WriteError::Transient(format!(
                "{} was deleted but is still there after {}s (finalizers?)",
                a.key(),
                REPLACE_GONE_WAIT.as_secs()
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
