//! Planning one object: its live state read, its selector kept, its replicas left to an autoscaler, the
//! server-side-apply dry run compared with it, and a replace when an immutable field changes.

use super::*;

/// The workloads the plan's HorizontalPodAutoscalers scale: their replicas belong to the autoscaler.
pub(super) fn autoscaled(desired: &[Desired]) -> std::collections::BTreeSet<(String, String)> {
    desired
        .iter()
        .filter(|d| d.object["kind"] == "HorizontalPodAutoscaler")
        .filter_map(|d| {
            let target = &d.object["spec"]["scaleTargetRef"];
            Some((
                target["kind"].as_str()?.to_string(),
                target["name"].as_str()?.to_string(),
            ))
        })
        .collect()
}

/// An autoscaled workload that exists keeps the replicas the autoscaler set: once another manager owns
/// `spec.replicas` the app stops sending it; until then it sends the live value (dropping a field it alone
/// owns would reset it to the default of 1).
pub(super) fn leave_replicas_to_the_autoscaler(object: &mut Value, live: &Value) {
    let others_own_replicas = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["manager"] != FIELD_MANAGER)
        .any(|m| !m["fieldsV1"]["f:spec"]["f:replicas"].is_null());
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if others_own_replicas {
        spec.remove("replicas");
    } else if let Some(replicas) = live["spec"].get("replicas") {
        spec.insert("replicas".into(), replicas.clone());
    }
}

/// The live workloads and Services of the desired objects (`Some` for each of those kinds: the object, or
/// `None` when it does not exist), read before planning so their selectors can be kept.
pub(super) async fn read_selecting(
    conn: &Connection,
    desired: &[Desired],
    namespace_missing: bool,
    listed: &crate::engine::listed::Listed,
) -> Result<Vec<Option<Option<Value>>>, EngineError> {
    stream::iter(desired.iter().map(|d| async move {
        let kind = d.object["kind"].as_str().unwrap_or_default();
        if !matches!(
            kind,
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Service"
        ) {
            return Ok(None);
        }
        if d.served.pending_crd || (namespace_missing && d.namespace.is_some()) {
            return Ok(Some(None));
        }
        let name = d.object["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(found) = listed.get(&d.served, d.namespace.as_deref(), name) {
            return Ok(Some(Some(found.clone())));
        }
        get_live(conn, &d.served, d.namespace.as_deref(), name)
            .await
            .map(Some)
    }))
    .buffered(CONCURRENCY)
    .collect::<Vec<Result<_, EngineError>>>()
    .await
    .into_iter()
    .collect()
}

/// Plan one object; a Secret whose generated keys `--rotate` names changes even when nothing else does.
pub(super) async fn plan_one(
    on: &Planning<'_>,
    d: &mut Desired,
    read: Option<Option<Value>>,
) -> Result<Action, EngineError> {
    let mut action = plan_object(on, d, read).await?;
    super::generated::new_values_are_changes(&mut action);
    Ok(action)
}

async fn plan_object(
    on: &Planning<'_>,
    d: &mut Desired,
    read: Option<Option<Value>>,
) -> Result<Action, EngineError> {
    let (app, conn, opts, key) = (on.app, on.conn, on.opts, on.key);
    let (namespace_missing, rollback) = (on.namespace_missing, on.rollback);
    let kind = d.object["kind"].as_str().unwrap_or_default().to_string();
    let name = d.object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let api_version = d.object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // A namespaced object in a namespace that does not exist yet cannot exist either; nor can an
    // object of a CRD the plan creates.
    let live = if let Some(read) = read {
        read
    } else if d.served.pending_crd || (namespace_missing && d.namespace.is_some()) {
        None
    } else if let Some(found) = on.listed.get(&d.served, d.namespace.as_deref(), &name) {
        Some(found.clone())
    } else {
        // Not the app's (or not there): read it alone.
        get_live(conn, &d.served, d.namespace.as_deref(), &name).await?
    };
    let (mut rotate, mut generated) = (Vec::new(), Vec::new());
    if kind == "Secret" {
        if !rollback {
            rotate = super::generated::rotated(on.rotations, &name);
        }
        let fill = crate::engine::secrets::Fill {
            live: live.as_ref(),
            generate: false,
            env: &on.opts.env,
            rotate: &rotate,
            cas: &on.opts.cas,
        };
        secret_values(app, &mut d.object, &fill, rollback)?;
        if !rollback {
            generated = super::generated::keys(app, &d.object, live.as_ref(), &rotate, key);
        }
    }
    let desired_digest = Some(crate::engine::hash::digest(&redact(&d.object, key)));
    let mut action = Action {
        object: ObjectRef {
            api_version,
            kind: kind.clone(),
            namespace: d.namespace.clone(),
            name: name.clone(),
        },
        action: ActionKind::Create,
        level: d.level,
        diff: Vec::new(),
        precondition: None,
        desired_digest,
        take: Vec::new(),
        reason: None,
        propagation: None,
        helm: live
            .as_ref()
            .and_then(|l| crate::engine::helm::claim(l, &opts.forget_helm)),
        rollout: None,
        rotate,
        generated,
    };
    let Some(live) = live else {
        // A create is dry-run too (when its namespace and kind exist), so the server validates it at
        // plan time.
        if !d.served.pending_crd && (!namespace_missing || d.namespace.is_none()) {
            dry_run(conn, d, &name, &kind, false).await?;
        }
        return Ok(action);
    };
    action.precondition = precondition(&live, key);
    if on.autoscaled.contains(&(kind.clone(), name.clone())) {
        leave_replicas_to_the_autoscaler(&mut d.object, &live);
        action.desired_digest = Some(crate::engine::hash::digest(&redact(&d.object, key)));
    }
    let adopt = !is_ours(&live, &app.name.v);
    if kind == "Namespace" && adopt && !adopting(opts, &kind, d.namespace.as_deref(), &name) {
        // The usual case on a shared cluster: the namespace is someone else's, and the app lives in it.
        action.action = ActionKind::Use;
        return Ok(action);
    }
    if adopt && !adopting(opts, &kind, d.namespace.as_deref(), &name) {
        return Err(EngineError::NotOwned { kind, name });
    }
    if kind == "CustomResourceDefinition"
        && let Some(problem) = crate::engine::crd_versions::check(&d.object, &live)
    {
        return Err(EngineError::CrdVersion { name, problem });
    }
    if !adopt
        && !opts.force_dry_run
        // Compared as they are: the values never leave memory, so no redaction (and no copy) is needed.
        && crate::engine::owned::same_as_applied(&d.object, &live, FIELD_MANAGER)
    {
        // Exactly what this app last applied, still as it left it: a dry run would change nothing.
        action.action = ActionKind::Unchanged;
        return Ok(action);
    }
    if !adopt {
        // An object of the app whose immutable fields change cannot be updated: replaced (a Job only once
        // it has finished), or refused for the kinds that hold data. Never for an object that is not the
        // app's (adopting one updates it).
        let decision = crate::engine::replace::decide(&d.object, &live, FIELD_MANAGER);
        if decision != crate::engine::replace::Decision::InPlace {
            return planned_replace(on, d, &live, decision, action).await;
        }
    }
    // A controller may write between the read and the dry run (status, annotations): compare the dry
    // run with the version it was made against, reading again when they differ.
    let mut live = live;
    let force = adopt || opts.force_dry_run;
    let (mut after, take) = match dry_run_taking(conn, d, &name, &kind, force, opts).await {
        // What the table does not know, the server refuses as immutable: the same decision.
        Err(EngineError::DryRun(message)) if !adopt => {
            let Some(fields) = crate::engine::immutable::from_server_message(&message) else {
                return Err(EngineError::DryRun(message));
            };
            let applied = crate::engine::owned::applied(&live, FIELD_MANAGER);
            let decision = crate::engine::replace::decide_for(&d.object, &live, fields, applied);
            return planned_replace(on, d, &live, decision, action).await;
        }
        other => other?,
    };
    action.take = take;
    let force = force || !action.take.is_empty();
    for _ in 0..3 {
        if after["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"] {
            break;
        }
        let Some(again) = get_live(conn, &d.served, d.namespace.as_deref(), &name).await? else {
            break;
        };
        live = again;
        action.precondition = precondition(&live, key);
        after = dry_run(conn, d, &name, &kind, force).await?;
    }
    action.diff = diff(&redact(&live, key), &redact(&after, key));
    if adopt {
        // Which fields change owner: what each other manager owns now and no longer owns after.
        action
            .take
            .extend(crate::engine::owners::taken(&live, &after, FIELD_MANAGER));
    }
    action.action = match (adopt, action.diff.is_empty()) {
        (true, _) => ActionKind::Adopt,
        (false, true) => ActionKind::Unchanged,
        (false, false) => ActionKind::Update,
    };
    action.rollout = crate::engine::selectors::rollout(&kind, &action.diff);
    Ok(action)
}

/// The action for an object whose immutable fields change ([`crate::engine::replace::decide`]): a `replace` whose
/// new object the server validated (a dry-run create) and whose diff is the live object against it, or
/// the refusal.
pub(super) async fn planned_replace(
    on: &Planning<'_>,
    d: &Desired,
    live: &Value,
    decision: crate::engine::replace::Decision,
    mut action: Action,
) -> Result<Action, EngineError> {
    use crate::engine::replace::Decision;
    let (kind, name) = (action.object.kind.clone(), action.object.name.clone());
    let key = on.key;
    let named = || match &d.namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.clone(),
    };
    match decision {
        Decision::InPlace => Ok(action),
        Decision::Replace {
            fields,
            diff: applied_diff,
            propagation,
        } => {
            // The server checks the new object before apply deletes the old one.
            let created = dry_run_replacement(on.conn, d, &name, &kind).await?;
            action.action = ActionKind::Replace;
            action.reason = Some(crate::engine::replace::reason(&kind, &fields, propagation));
            action.propagation = Some(propagation);
            action.diff = match created {
                Some(created) => crate::engine::replace::replacement_diff(
                    &redact(live, key),
                    &redact(&created, key),
                    &name,
                ),
                // Values are compared as they are only for kinds without secrets.
                None if kind != "Secret" => applied_diff,
                None => Vec::new(),
            };
            Ok(action)
        }
        Decision::Running { fields } => Err(EngineError::JobRunning {
            namespace: d.namespace.clone().unwrap_or_default(),
            name,
            fields,
        }),
        Decision::Refused { fields } => Err(EngineError::ImmutableData {
            lost: crate::engine::immutable::data_lost(&kind).to_string(),
            name: named(),
            kind,
            fields,
        }),
    }
}
