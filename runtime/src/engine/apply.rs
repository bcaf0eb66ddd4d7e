//! Applying exactly an approved plan: preconditions first (nothing is written when one fails), then
//! server-side apply in dependency order, every step journaled before and after it runs.

use super::error::EngineError;
use super::plan::{
    Action, ActionKind, Desired, FIELD_MANAGER, Plan, PlanOptions, desired, is_ours,
};
use super::resources::{Resources, api_for};
use super::secrets::{materialize, redact};
use super::target::Connection;
use crate::journal::{Journal, PlannedStep, ReleaseKind, ReleaseState, StepOutcome};
use crate::render;
use futures::{StreamExt, stream};
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions};
use piceli_core::model::App;
use serde_json::Value;
use std::collections::BTreeMap;

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The release number journaled (none when the plan changed nothing).
    pub release: Option<u64>,
    /// Objects written (created, updated, adopted) and deleted.
    pub written: usize,
    /// Objects left as they were.
    pub unchanged: usize,
}

/// A test-only hook: called after each journal write with a step description; returning `false` makes the
/// apply stop right there, as if the process were killed.
pub type FaultHook = dyn Fn(&str) -> bool + Send + Sync;

/// Execute the plan stored under `hash`.
pub async fn apply(
    app: &App,
    conn: &Connection,
    journal: &Journal,
    hash: &str,
    opts: &render::Options,
    plan_opts: &PlanOptions,
) -> Result<Applied, EngineError> {
    let stored = journal
        .load_plan(hash)
        .map_err(|e| EngineError::Journal(e.to_string()))?
        .ok_or_else(|| EngineError::UnknownPlan(hash.to_string()))?;
    let plan: Plan = serde_json::from_str(&stored)
        .map_err(|e| EngineError::Journal(format!("stored plan {hash}: {e}")))?;
    if plan.compute_hash() != plan.hash || plan.hash != hash {
        return Err(EngineError::UnknownPlan(hash.to_string()));
    }
    if plan.server != conn.server {
        return Err(EngineError::Precondition(format!(
            "the plan was made against {}, this is {}",
            plan.server, conn.server
        )));
    }
    // The app must still render exactly what was planned.
    let rendered = render::render(app, opts)?;
    let resources = Resources::default();
    let mut wanted = desired(conn, &rendered, &resources).await?;
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, d) in wanted.iter().enumerate() {
        by_key.insert(key_of(d), i);
    }
    // Every precondition, before any write.
    for a in &plan.actions {
        check_precondition(app, conn, &resources, a, &mut wanted, &by_key, plan_opts).await?;
    }
    let changing: Vec<&Action> = plan.actions.iter().filter(|a| a.changes()).collect();
    let unchanged = plan.actions.len() - changing.len();
    if changing.is_empty() {
        return Ok(Applied {
            release: None,
            written: 0,
            unchanged,
        });
    }
    let steps: Vec<PlannedStep> = changing
        .iter()
        .map(|a| PlannedStep {
            kind: a.kind.clone(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            action: format!("{:?}", a.action).to_lowercase(),
            level: a.level,
            desired_digest: a.desired_digest.clone(),
        })
        .collect();
    let release = journal
        .begin_release(hash, ReleaseKind::Apply, &steps)
        .map_err(|e| EngineError::Journal(e.to_string()))?;
    let number = journal.release(release).ok().flatten().map(|r| r.number);

    // Levels in order; objects of a level in parallel.
    let mut index = 0u32;
    let mut i = 0;
    while i < changing.len() {
        if journal.stop_requested().unwrap_or(false) {
            let _ = journal.clear_stop();
            journal
                .finish_release(release, ReleaseState::Stopped)
                .map_err(|e| EngineError::Journal(e.to_string()))?;
            return Err(EngineError::Apply(
                "stopped on request between steps; `resume` continues".into(),
            ));
        }
        let level = (changing[i].action == ActionKind::Delete, changing[i].level);
        let mut batch = Vec::new();
        while i < changing.len()
            && (changing[i].action == ActionKind::Delete, changing[i].level) == level
        {
            batch.push((index, changing[i]));
            index += 1;
            i += 1;
        }
        let results: Vec<Result<(), EngineError>> =
            stream::iter(batch.into_iter().map(|(idx, a)| {
                let d = by_key.get(&a.key()).map(|&w| &wanted[w]);
                let resources = &resources;
                async move {
                    run_step(
                        conn,
                        journal,
                        release,
                        idx,
                        a,
                        d,
                        resources,
                        &plan_opts.digest_key,
                    )
                    .await
                }
            }))
            .buffer_unordered(16)
            .collect()
            .await;
        if let Some(e) = results.into_iter().find_map(Result::err) {
            let _ = journal.finish_release(release, ReleaseState::Failed);
            return Err(e);
        }
    }
    journal
        .finish_release(release, ReleaseState::Succeeded)
        .map_err(|e| EngineError::Journal(e.to_string()))?;
    Ok(Applied {
        release: number,
        written: changing.len(),
        unchanged,
    })
}

fn key_of(d: &Desired) -> String {
    let kind = d.object["kind"].as_str().unwrap_or_default();
    let name = d.object["metadata"]["name"].as_str().unwrap_or_default();
    match &d.namespace {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

async fn check_precondition(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    a: &Action,
    wanted: &mut [Desired],
    by_key: &BTreeMap<String, usize>,
    plan_opts: &PlanOptions,
) -> Result<(), EngineError> {
    let probe = serde_json::json!({"apiVersion": a.api_version, "kind": a.kind});
    let served = resources.served(&conn.client, &probe).await?;
    let api = api_for(&conn.client, &served, a.namespace.as_deref());
    let live = api
        .get_opt(&a.name)
        .await
        .map_err(|e| EngineError::cluster(format!("reading {}", a.key()), e))?
        .map(|o| serde_json::to_value(o).unwrap_or(Value::Null));
    let seen = live.as_ref().map(|l| {
        (
            l["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            l["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    });
    let expected = a
        .precondition
        .as_ref()
        .map(|p| (p.uid.clone(), p.resource_version.clone()));
    if seen != expected {
        let what = match (&expected, &seen) {
            (None, Some(_)) => "was created by someone else",
            (Some(_), None) => "was deleted",
            _ => "was changed",
        };
        return Err(EngineError::Precondition(format!(
            "{} {what} since the plan; nothing was written",
            a.key()
        )));
    }
    if a.action == ActionKind::Delete {
        return Ok(());
    }
    let Some(&w) = by_key.get(&a.key()) else {
        return Err(EngineError::Stale(format!(
            "the app no longer declares {}",
            a.key()
        )));
    };
    let d = &mut wanted[w];
    if a.kind == "Secret" {
        materialize(app, &mut d.object, live.as_ref(), false)?;
    }
    let now = super::hash::digest(&redact(&d.object, &plan_opts.digest_key));
    if Some(now) != a.desired_digest {
        return Err(EngineError::Stale(format!(
            "{} renders differently than when it was planned",
            a.key()
        )));
    }
    if a.kind == "Secret" {
        materialize(app, &mut d.object, live.as_ref(), true)?;
    }
    if a.action != ActionKind::Adopt && live.as_ref().is_some_and(|l| !is_ours(l, &app.name.v)) {
        return Err(EngineError::NotOwned {
            kind: a.kind.clone(),
            name: a.name.clone(),
        });
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run_step(
    conn: &Connection,
    journal: &Journal,
    release: crate::journal::ReleaseId,
    index: u32,
    a: &Action,
    d: Option<&Desired>,
    resources: &Resources,
    key: &[u8; 32],
) -> Result<(), EngineError> {
    journal
        .step_started(release, index)
        .map_err(|e| EngineError::Journal(e.to_string()))?;
    let probe = serde_json::json!({"apiVersion": a.api_version, "kind": a.kind});
    let served = resources.served(&conn.client, &probe).await?;
    let api = api_for(&conn.client, &served, a.namespace.as_deref());
    let result: Result<StepOutcome, String> = match (a.action, d) {
        (ActionKind::Delete, _) => {
            let pre = a.precondition.as_ref();
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: pre.map(|p| p.uid.clone()),
                    resource_version: pre.map(|p| p.resource_version.clone()),
                }),
                ..DeleteParams::background()
            };
            api.delete(&a.name, &params)
                .await
                .map(|_| StepOutcome {
                    ok: true,
                    detail: "deleted".into(),
                    uid: None,
                    resource_version: None,
                    digest: None,
                })
                .map_err(|e| e.to_string())
        }
        (_, Some(d)) => {
            let mut body = d.object.clone();
            if let (Some(p), Some(meta)) = (
                &a.precondition,
                body.get_mut("metadata").and_then(Value::as_object_mut),
            ) {
                // Optimistic concurrency: the write fails if the object changed since the plan.
                meta.insert(
                    "resourceVersion".into(),
                    Value::String(p.resource_version.clone()),
                );
            }
            let mut params = PatchParams::apply(FIELD_MANAGER);
            params.force = a.action == ActionKind::Adopt;
            api.patch(&a.name, &params, &Patch::Apply(&body))
                .await
                .map(|o: DynamicObject| StepOutcome {
                    ok: true,
                    detail: format!("{:?}", a.action).to_lowercase(),
                    uid: o.metadata.uid.clone(),
                    resource_version: o.metadata.resource_version.clone(),
                    digest: Some(super::hash::digest(&redact(&d.object, key))),
                })
                .map_err(|e| e.to_string())
        }
        (_, None) => Err(format!("{} has no desired object", a.key())),
    };
    let outcome = match &result {
        Ok(o) => o.clone(),
        Err(e) => StepOutcome {
            ok: false,
            detail: e.clone(),
            uid: None,
            resource_version: None,
            digest: None,
        },
    };
    journal
        .step_finished(release, index, &outcome)
        .map_err(|e| EngineError::Journal(e.to_string()))?;
    result
        .map(|_| ())
        .map_err(|e| EngineError::Apply(format!("{}: {e}", a.key())))
}
