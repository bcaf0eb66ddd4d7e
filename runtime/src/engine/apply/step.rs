//! One step of a release: the write it makes (server-side apply or delete), tried again while the failure may
//! pass, journaled before and after.

use super::*;

/// What every step of one run shares.
pub(super) struct Step<'a> {
    pub(super) conn: &'a Connection,
    pub(super) journal: &'a Journal,
    pub(super) release: ReleaseId,
    pub(super) resources: &'a Resources,
    pub(super) key: &'a [u8; 32],
    /// Send the checked resourceVersion with each write (a first run); a resume cannot (its own
    /// interrupted write may have changed it).
    pub(super) optimistic: bool,
    /// The resourceVersion each object had when the preconditions were checked.
    pub(super) rvs: BTreeMap<ObjectKey, String>,
    pub(super) hook: Option<&'a FaultHook>,
    /// The cluster lock, checked before every level.
    pub(super) lock: Option<&'a LockSlot>,
}

/// Whether a failed request may succeed when sent again: the connection failed, or the server was
/// overloaded or broken (5xx, 429). Anything else is the server rejecting the request.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code >= 500 || s.code == 429,
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => true,
        _ => false,
    }
}

/// Why one write failed.
pub(super) enum WriteError {
    /// The server rejected it.
    Rejected(String),
    /// It kept failing for a reason that may pass.
    Transient(String),
}

/// One step in its `apply_step` span (step index, action, object), its outcome logged at debug.
pub(super) async fn run_step(
    step: &Step<'_>,
    index: u32,
    a: &Action,
    d: Option<&Desired>,
) -> Result<(), EngineError> {
    use tracing::Instrument;
    let span = tracing::info_span!("apply_step", step = index, action = a.action.as_str(), object = %a.key());
    let result = write_step(step, index, a, d).instrument(span.clone()).await;
    span.in_scope(|| match &result {
        Ok(()) => tracing::debug!("step done"),
        Err(e) => tracing::debug!(error = %e, "step failed"),
    });
    result
}

async fn write_step(
    step: &Step<'_>,
    index: u32,
    a: &Action,
    d: Option<&Desired>,
) -> Result<(), EngineError> {
    let journal = step.journal;
    journal.step_started(step.release, index)?;
    checkpoint(step.hook, &format!("step {index} started"))?;
    let served = step
        .resources
        .served(&step.conn.client, &a.object.gvk())
        .await?;
    let api = api_for(&step.conn.client, &served, a.object.namespace.as_deref());
    let write = match (a.action, d) {
        (ActionKind::Delete, _) => Some(Write::Delete),
        (_, Some(d)) => Some(Write::Apply(d)),
        (_, None) => None,
    };
    let mut attempts = crate::retry::Policy::WRITES.start();
    let replace = a.action == ActionKind::Replace;
    // A replace deletes the planned object first (and waits until it is gone); the apply below then
    // creates the new one. A resumed replace finds it deleted (it creates) or created again (the apply
    // changes nothing).
    let cleared = if replace {
        // The object as it was goes into the journal first: nothing is deleted without its backup.
        back_up(step, index, &served, a).await?;
        let cleared = clear_for_replace(step, &api, &served, a).await;
        if cleared.is_ok() {
            checkpoint(step.hook, &format!("step {index} deleted"))?;
        }
        cleared
    } else {
        Ok(())
    };
    // The resourceVersion an optimistic write carries: the checked one, or the one a conflict re-read
    // (none for the object a replace creates).
    let mut rv = if replace {
        None
    } else {
        step.rvs.get(&a.key()).cloned()
    };
    let mut conflicts = 0;
    let mut cleared = Some(cleared);
    let result = loop {
        if let Some(Err(e)) = cleared.take() {
            // The delete half of a replace failed: nothing is created.
            break Err(e);
        }
        let Some(write) = &write else {
            break Err(WriteError::Rejected(format!(
                "{} has no desired object",
                a.key()
            )));
        };
        let attempt = attempts.attempt();
        match write_once(step, &api, a, write, attempt, rv.as_deref()).await {
            // Someone wrote the object between the check and this write — a controller updating its
            // status, usually. The write goes ahead only if what the plan saw still holds.
            Err(kube::Error::Api(s))
                if s.code == 409
                    && step.optimistic
                    && attempt == 1
                    && a.precondition.is_some()
                    && !replace =>
            {
                conflicts += 1;
                match unchanged_since_plan(step, &served, a).await {
                    Some(now) if conflicts <= CONFLICT_RETRIES => rv = Some(now),
                    Some(_) => {
                        break Err(WriteError::Transient(format!(
                            "the object kept changing while it was written ({conflicts} conflicts)"
                        )));
                    }
                    None => {
                        break Err(WriteError::Rejected(
                            "the object was changed since the plan (the server refused the write with \
                             HTTP 409); nothing of it was written: plan again"
                                .to_string(),
                        ));
                    }
                }
            }
            Err(kube_error) if is_transient(&kube_error) => {
                let Some(pause) = attempts.next() else {
                    break Err(WriteError::Transient(format!(
                        "{} (after {attempt} attempts)",
                        crate::engine::cluster_error::classify(&kube_error).1
                    )));
                };
                tracing::debug!(
                    attempt,
                    error = %crate::engine::cluster_error::classify(&kube_error).1,
                    "the write failed for a reason that may pass; trying again"
                );
                tokio::time::sleep(pause).await;
            }
            Err(kube_error) => {
                // The server's words, never a Debug dump of its Status.
                break Err(WriteError::Rejected(
                    crate::engine::cluster_error::classify(&kube_error).1,
                ));
            }
            Ok(outcome) => break Ok(outcome),
        }
    };
    checkpoint(step.hook, &format!("step {index} written"))?;
    let outcome = match &result {
        Ok(o) => o.clone(),
        Err(WriteError::Rejected(e) | WriteError::Transient(e)) => StepOutcome {
            ok: false,
            detail: e.clone(),
            uid: None,
            resource_version: None,
            digest: None,
        },
    };
    journal.step_finished(step.release, index, &outcome)?;
    checkpoint(step.hook, &format!("step {index} finished"))?;
    match result {
        Ok(_) => Ok(()),
        Err(WriteError::Rejected(reason)) => Err(EngineError::Apply {
            object: a.key(),
            reason,
        }),
        Err(WriteError::Transient(e)) => Err(EngineError::Interrupted(format!(
            "writing {}: {e}",
            a.key()
        ))),
    }
}

/// What a step writes.
pub(super) enum Write<'a> {
    /// Delete the object.
    Delete,
    /// Server-side apply this object.
    Apply(&'a Desired),
}

/// One attempt at a step's write. A retry (`attempt > 1`) sends no resourceVersion and takes a missing
/// object as deleted: the earlier attempt may have landed with its answer lost. `rv` is the
/// resourceVersion an optimistic first attempt carries.
pub(super) async fn write_once(
    step: &Step<'_>,
    api: &kube::Api<DynamicObject>,
    a: &Action,
    write: &Write<'_>,
    attempt: u32,
    rv: Option<&str>,
) -> Result<StepOutcome, kube::Error> {
    let optimistic = step.optimistic && attempt == 1;
    match write {
        Write::Delete => {
            let pre = a.precondition.as_ref();
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: pre.map(|p| p.uid.clone()),
                    resource_version: if optimistic {
                        rv.map(str::to_string)
                    } else {
                        None
                    },
                }),
                ..DeleteParams::background()
            };
            let done = StepOutcome {
                ok: true,
                detail: "deleted".into(),
                uid: None,
                resource_version: None,
                digest: None,
            };
            match api.delete(&a.object.name, &params).await {
                Ok(_) => Ok(done),
                Err(kube::Error::Api(s)) if s.code == 404 && !optimistic => Ok(done),
                Err(e) => Err(e),
            }
        }
        Write::Apply(d) => {
            let mut body = d.object.clone();
            if optimistic
                && let (Some(rv), Some(meta)) =
                    (rv, body.get_mut("metadata").and_then(Value::as_object_mut))
            {
                // Optimistic concurrency: the write fails if the object changed since the check.
                meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
            }
            let mut params = PatchParams::apply(FIELD_MANAGER);
            // Adopting, or taking fields over that the approved plan lists (`--take-ownership`).
            params.force = a.action == ActionKind::Adopt || !a.take.is_empty();
            let mut written: DynamicObject = api
                .patch(&a.object.name, &params, &Patch::Apply(&body))
                .await?;
            if a.action == ActionKind::Adopt {
                written =
                    crate::engine::owners::release_old_owners(api, &a.object.name, written).await?;
            }
            if a.helm.as_ref().is_some_and(|c| c.forget) {
                // `--forget-helm-release`: Helm's annotations go with the object's own write.
                written = crate::engine::helm::forget_claim(api, &a.object.name, written).await?;
            }
            Ok(written).map(|o: DynamicObject| StepOutcome {
                ok: true,
                detail: a.action.as_str().to_string(),
                uid: o.metadata.uid.clone(),
                resource_version: o.metadata.resource_version.clone(),
                digest: Some(crate::engine::hash::digest(&redact(&d.object, step.key))),
            })
        }
    }
}
