//! The dry runs a plan makes: server-side apply (taking over conflicting fields when asked), the create of a
//! replacement, and the Secret values they carry (filled in, never stored).

use super::*;

/// A dry run that meets field-manager conflicts: taken over when `--take-ownership` names every one of
/// the object's conflicting fields (the dry run is repeated with force, and the plan records them), else
/// reported ([`EngineError::FieldConflicts`], collected over the whole plan).
pub(super) async fn dry_run_taking(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
    force: bool,
    opts: &PlanOptions,
) -> Result<(Value, Vec<crate::engine::conflicts::Taken>), EngineError> {
    match dry_run(conn, d, name, kind, force).await {
        Err(EngineError::FieldConflicts(conflicts))
            if conflicts.iter().all(|c| opts.take_ownership.takes(c)) =>
        {
            let taken = conflicts
                .into_iter()
                .map(|c| crate::engine::conflicts::Taken {
                    field: c.field,
                    from: c.manager,
                })
                .collect();
            Ok((dry_run(conn, d, name, kind, true).await?, taken))
        }
        Err(EngineError::FieldConflicts(conflicts)) => Err(EngineError::FieldConflicts(
            conflicts
                .into_iter()
                .filter(|c| !opts.take_ownership.takes(c))
                .collect(),
        )),
        other => other.map(|after| (after, Vec::new())),
    }
}

/// A server-side-apply dry run of a desired object: what the server would store.
pub(super) async fn dry_run(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
    force: bool,
) -> Result<Value, EngineError> {
    let body = if d
        .object
        .to_string()
        .contains(crate::engine::secrets::TO_GENERATE)
    {
        blank_to_generate(&d.object)
    } else {
        d.object.clone()
    };
    dry_run_body(conn, d, name, kind, force, &body).await
}

async fn dry_run_body(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
    force: bool,
    body: &Value,
) -> Result<Value, EngineError> {
    let api = api_for(&conn.client, &d.served, d.namespace.as_deref());
    let mut params = PatchParams::apply(FIELD_MANAGER).dry_run();
    params.force = force;
    let result: DynamicObject = api
        .patch(name, &params, &Patch::Apply(body))
        .await
        .map_err(|e| dry_run_error(kind, d.namespace.as_deref(), name, e))?;
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}

/// A dry-run create of the object a replace creates, so the server validates it at plan time (apply deletes
/// the old object before it creates this one); returns what the server would store. The name is still the old object's, so the create uses a
/// name generated from it (`generateName`; the name itself was validated when the old object was made).
pub(super) async fn dry_run_replacement(
    conn: &Connection,
    d: &Desired,
    name: &str,
    kind: &str,
) -> Result<Option<Value>, EngineError> {
    let api = api_for(&conn.client, &d.served, d.namespace.as_deref());
    let mut body = d.object.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("name");
        meta.insert("generateName".into(), Value::String(format!("{name}-")));
    }
    let object: DynamicObject = serde_json::from_value(body).map_err(|e| {
        EngineError::DryRun(format!("{kind}/{name} cannot be sent for a dry run: {e}"))
    })?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    api.create(&params, &object)
        .await
        .map(|created| serde_json::to_value(created).ok())
        .map_err(|e| dry_run_error(kind, d.namespace.as_deref(), name, e))
}

/// Fill a desired Secret's values: from the app's sources, or — restoring a release, whose values were
/// never stored — the values the cluster holds now.
pub fn secret_values(
    app: &App,
    object: &mut Value,
    fill: &crate::engine::secrets::Fill<'_>,
    rollback: bool,
) -> Result<(), EngineError> {
    let live = fill.live;
    if !rollback {
        return materialize(app, object, fill);
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Some(live) = live else {
        return Err(EngineError::SecretSource {
            secret: name,
            key: "*".into(),
            reason: "it no longer exists in the cluster, and secret values are never stored, so a rollback cannot restore it".into(),
        });
    };
    if let Some(map) = object.as_object_mut() {
        map.remove("stringData");
        map.insert(
            "data".into(),
            live.get("data")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
        );
    }
    Ok(())
}

/// A value still to generate (new, or rotated) is dry-run empty: the key stays, so the server checks the
/// keys a Secret's type needs (`tls.crt`, `tls.key`) are there — leaving it out would remove a rotated key,
/// which the server refuses for a `kubernetes.io/tls` Secret. The plan's diff shows such keys as made at
/// apply ([`super::generated::new_values_are_changes`]).
pub(super) fn blank_to_generate(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(data) = out.get_mut("data").and_then(Value::as_object_mut) {
        for v in data.values_mut() {
            if v == crate::engine::secrets::TO_GENERATE {
                *v = Value::String(String::new());
            }
        }
    }
    out
}

pub(super) fn dry_run_error(
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    e: kube::Error,
) -> EngineError {
    match e {
        kube::Error::Api(s) if s.code == 409 => {
            let object = ObjectKey::new(kind, namespace, name).to_string();
            EngineError::FieldConflicts(crate::engine::conflicts::from_status(&object, &s))
        }
        kube::Error::Api(s) if s.code == 422 || s.code == 400 => {
            EngineError::DryRun(format!("{kind}/{name} is invalid: {}", s.message))
        }
        other => EngineError::cluster(format!("dry-running {kind}/{name}"), other),
    }
}
