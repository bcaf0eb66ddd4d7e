//! Deletions: objects the previous release applied that the app no longer declares, still ours, and not of a
//! protected kind.

use super::*;

/// Deletions: objects the previous release applied that the app no longer declares, still ours, and
/// not of a protected kind.
pub(super) async fn prune(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    desired: &[Desired],
    opts: &PlanOptions,
) -> Result<Vec<Action>, EngineError> {
    let mut out = Vec::new();
    // What the app still declares, as a set: a scan of every desired object per previous one made a
    // re-plan quadratic in the number of objects.
    let declared: std::collections::HashSet<(&str, &str, Option<&str>)> = desired
        .iter()
        .map(|d| {
            (
                d.object["kind"].as_str().unwrap_or_default(),
                d.object["metadata"]["name"].as_str().unwrap_or_default(),
                d.namespace.as_deref(),
            )
        })
        .collect();
    for prev in &opts.previous {
        if PROTECTED_KINDS.contains(&prev.kind.as_str()) {
            continue;
        }
        let key = (
            prev.kind.as_str(),
            prev.name.as_str(),
            prev.namespace.as_deref(),
        );
        if declared.contains(&key) {
            continue;
        }
        let served = match resources.served(&conn.client, &prev.gvk()).await {
            Ok(s) => s,
            Err(EngineError::UnknownKind { .. }) => continue,
            Err(e) => return Err(e),
        };
        let Some(live) = get_live(conn, &served, prev.namespace.as_deref(), &prev.name).await?
        else {
            continue;
        };
        if !is_ours(&live, &app.name.v) {
            continue;
        }
        out.push(Action {
            object: prev.clone(),
            action: ActionKind::Delete,
            level: level(&prev.kind),
            diff: Vec::new(),
            precondition: precondition(&live, &opts.digest_key),
            desired_digest: None,
            take: Vec::new(),
            reason: None,
            propagation: None,
            helm: None,
            rollout: None,
            rotate: Vec::new(),
            generated: Vec::new(),
        });
    }
    Ok(out)
}
