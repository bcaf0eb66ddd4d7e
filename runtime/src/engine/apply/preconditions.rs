//! What apply checks before it writes: each object is still what the plan saw (the same object, the same
//! content), and a write's retry knows whether it still is.

use super::*;

pub(super) fn key_of(d: &Desired) -> String {
    crate::engine::key::ObjectKey::of(&d.object, d.namespace.as_deref()).to_string()
}

#[allow(clippy::too_many_arguments)] // one call site; the arguments are the apply run's state
pub(super) async fn check_precondition(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    a: &Action,
    wanted: &mut [Desired],
    by_key: &BTreeMap<String, usize>,
    plan_opts: &PlanOptions,
    rollback: bool,
    rvs: &mut BTreeMap<String, String>,
) -> Result<(), EngineError> {
    let probe = serde_json::json!({"apiVersion": a.api_version, "kind": a.kind});
    let served = resources.served(&conn.client, &probe).await?;
    let live =
        crate::engine::resources::read(&conn.client, &served, a.namespace.as_deref(), &a.name)
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
        let what = match (&a.precondition, &live) {
            (None, Some(l)) if is_ours(l, &app.name.v) => {
                "was created by an apply of this app (this plan was already applied, or another plan was)"
            }
            (None, Some(_)) => "was created by someone else",
            (Some(_), None) => "was deleted",
            _ => "was changed",
        };
        return Err(EngineError::Precondition(format!(
            "{} {what} since the plan; nothing was written",
            a.key()
        )));
    }
    if let Some(rv) = current_rv {
        rvs.insert(a.key(), rv);
    }
    if matches!(a.action, ActionKind::Delete | ActionKind::Use) {
        return Ok(());
    }
    let Some(&w) = by_key.get(&a.key()) else {
        return Err(EngineError::Stale(format!(
            "the plan has no object for {}",
            a.key()
        )));
    };
    let d = &mut wanted[w];
    if a.kind == "Secret" {
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
            return Err(EngineError::Stale(format!(
                "the values of {} changed since the plan",
                a.key()
            )));
        }
        if !rollback {
            fill.generate = true;
            materialize(app, &mut d.object, &fill)?;
        }
    }
    if a.action != ActionKind::Adopt && live.as_ref().is_some_and(|l| !is_ours(l, &app.name.v)) {
        return Err(EngineError::NotOwned {
            kind: a.kind.clone(),
            name: a.name.clone(),
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
    let live =
        crate::engine::resources::read(&step.conn.client, served, a.namespace.as_deref(), &a.name)
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
