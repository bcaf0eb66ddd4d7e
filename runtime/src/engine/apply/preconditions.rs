//! What apply checks before it writes: each object is still what the plan saw (the same object, the same
//! content), and a write's retry knows whether it still is.

use super::*;

pub(super) fn key_of(d: &Desired) -> ObjectKey {
    ObjectKey::of(&d.object, d.namespace.as_deref())
}

/// Check that `a`'s object is still what the plan saw (and its secret values are what were planned),
/// recording the resourceVersion the write will carry in `rvs`.
pub(super) async fn check_precondition(
    run: &ApplyRun<'_>,
    resources: &Resources,
    a: &Action,
    wanted: &mut Wanted,
    rvs: &mut BTreeMap<ObjectKey, String>,
) -> Result<(), EngineError> {
    let (app, conn, plan_opts) = (run.app, run.conn, run.plan_opts);
    let rollback = run.plan.rollback_of.is_some();
    let served = resources.served(&conn.client, &a.object.gvk()).await?;
    let live = crate::engine::resources::read(
        &conn.client,
        &served,
        a.object.namespace.as_deref(),
        &a.object.name,
    )
    .await
    .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?;
    let current_rv = live.as_ref().and_then(|l| {
        l["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    });
    let holds = match (&a.precondition, &live) {
        (None, None) => true,
        // Used as it is: only that it is still the same object.
        (Some(p), Some(l)) if a.action == ActionKind::Use => {
            l["metadata"]["uid"].as_str() == Some(p.uid.as_str())
        }
        (Some(p), Some(l)) => {
            // The resourceVersion alone proves it cheaply; else the content decides.
            (l["metadata"]["uid"].as_str() == Some(p.uid.as_str())
                && current_rv.as_deref() == Some(p.resource_version.as_str()))
                || as_planned(p, l, &plan_opts.digest_key)
        }
        _ => false,
    };
    if !holds {
        let drift = match (&a.precondition, &live) {
            (None, Some(l)) if is_ours(l, &app.name.v) => Drift::CreatedByThisApp,
            (None, Some(_)) => Drift::CreatedBySomeoneElse,
            (Some(_), None) => Drift::Deleted,
            _ => Drift::Changed,
        };
        return Err(EngineError::Precondition {
            object: a.key(),
            drift,
        });
    }
    if let Some(rv) = current_rv {
        rvs.insert(a.key(), rv);
    }
    if matches!(a.action, ActionKind::Delete | ActionKind::Use) {
        return Ok(());
    }
    let Some(&w) = wanted.by_key.get(&a.key()) else {
        return Err(EngineError::Stale {
            object: a.key(),
            reason: Staleness::NotInPlan,
        });
    };
    let d = &mut wanted.objects[w];
    if a.object.kind == "Secret" {
        // Secret values are never stored: read them again, and they must be what was planned.
        let mut fill = crate::engine::secrets::Fill {
            live: live.as_ref(),
            generate: false,
            env: &plan_opts.env,
            rotate: &a.rotate,
            cas: &plan_opts.cas,
        };
        secret_values(app, &mut d.object, &fill, rollback)?;
        let now = crate::engine::hash::digest(&redact(&d.object, &plan_opts.digest_key));
        if Some(now) != a.desired_digest {
            return Err(EngineError::Stale {
                object: a.key(),
                reason: Staleness::SecretValuesChanged,
            });
        }
        if !rollback {
            fill.generate = true;
            materialize(app, &mut d.object, &fill)?;
        }
    }
    if a.action != ActionKind::Adopt && live.as_ref().is_some_and(|l| !is_ours(l, &app.name.v)) {
        return Err(EngineError::NotOwned {
            kind: a.object.kind.clone(),
            name: a.object.name.clone(),
        });
    }
    Ok(())
}

/// How often a write that conflicted with a change that left the plan's precondition holding (a status
/// update) is sent again with the new resourceVersion.
pub(super) const CONFLICT_RETRIES: u32 = 3;

/// The object's resourceVersion now, if it is still what the plan saw: the same object (uid) with the same
/// content (status and server-managed metadata aside). `None` when it changed, is gone or cannot be read.
pub(super) async fn unchanged_since_plan(
    step: &Step<'_>,
    served: &crate::engine::resources::Served,
    a: &Action,
) -> Option<String> {
    let p = a.precondition.as_ref()?;
    let live = crate::engine::resources::read(
        &step.conn.client,
        served,
        a.object.namespace.as_deref(),
        &a.object.name,
    )
    .await
    .ok()??;
    as_planned(p, &live, step.key).then(|| {
        live["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    })?
}

/// Whether a live object is still what the plan saw: the same object (uid) with the same content (status
/// and server-managed metadata aside, so a controller's status update is no change).
pub(super) fn as_planned(
    p: &crate::engine::plan::Precondition,
    live: &Value,
    key: &[u8; 32],
) -> bool {
    live["metadata"]["uid"].as_str() == Some(p.uid.as_str())
        && crate::engine::plan::content_digest(live, key) == p.content
}
