//! Committing a built object: the store transaction of a write, the create/update preconditions
//! against the stored object, and — when admission webhooks may match — building and admitting
//! outside the transaction, then storing only if the object did not change meanwhile.

use crate::registry::convert;
use serde_json::{Value, json};

use super::{
    Candidate, Mode, Outcome, WriteCtx, build, check_namespace, meta_mut, namespace_usable, rv_of,
};
use crate::registry::admission::WebhookSet;
use crate::status::ApiError;
use crate::storage::{EventType, Writer};

/// Runs one write. `produce` turns the current object (if any) into the candidate.
///
/// Without admission webhooks for this resource, the whole write is one store transaction. With
/// them, the object is built (and the webhooks called) outside the transaction, then stored only if
/// the object is still the one it was built from — the store stays usable while webhooks answer,
/// also to webhooks that call back into the API. A server-side apply whose object changed meanwhile
/// is rebuilt (up to five times); other writes get 409 Conflict, as a failed precondition would.
pub fn write(
    ctx: &WriteCtx<'_>,
    name: &str,
    mode: Mode,
    produce: impl FnOnce(Option<&Value>) -> Result<Candidate, ApiError>,
) -> Result<Outcome, ApiError> {
    let rt = ctx.rt;
    let webhooks = ctx.backend.webhooks.current(&ctx.backend.store)?;
    let outcome = if webhooks.may_match(rt, ctx.subresource) {
        write_admitted(ctx, name, mode, produce, &*webhooks)?
    } else {
        let rk = rt.store_key();
        let store_ns = if rt.namespaced { ctx.ns } else { "" };
        ctx.backend.store.write(|w| {
            let old = w.get(&rk, store_ns, name)?;
            precheck(ctx, name, mode, old.as_ref())?;
            if old.is_none() && rt.namespaced {
                check_namespace(w, ctx.ns)?;
            }
            // The write works on the object at the request's version; it is stored converted back.
            let view = old.clone().map(|o| convert::from_storage(rt, o));
            let cand = produce(view.as_ref())?;
            let mut warnings = Vec::new();
            let built = build(ctx, name, view.as_ref(), cand, &mut warnings, None)?;
            store(w, ctx, name, old, built, warnings)
        })?
    };
    if rt.strategy().defines_types() && !ctx.dry_run {
        establish(ctx, name, &outcome)?;
        ctx.backend.reload_crds()?;
    }
    Ok(outcome)
}

/// What apiextensions' naming controller does right after a CRD is stored: accepts its names and
/// sets `NamesAccepted` and `Established`, as the `kube-apiserver` manager through the status
/// subresource (the request's answer is the CRD as it was stored before that).
fn establish(ctx: &WriteCtx<'_>, name: &str, outcome: &Outcome) -> Result<(), ApiError> {
    let crd = &outcome.object;
    if crate::registry::crd::names_accepted(crd)
        || crd.pointer("/metadata/deletionTimestamp").is_some()
        || crd.is_null()
    {
        return Ok(());
    }
    let controller = WriteCtx {
        backend: ctx.backend,
        rt: ctx.rt,
        ns: ctx.ns,
        subresource: "status",
        manager: "kube-apiserver".into(),
        dry_run: false,
        validation: ctx.validation,
        authorize_create: None,
    };
    write(&controller, name, Mode::Update, |old| {
        let mut crd = old.cloned().unwrap_or(Value::Null);
        crate::registry::crd::set_status(&mut crd);
        Ok(Candidate::Replace(crd))
    })?;
    Ok(())
}

fn precheck(
    ctx: &WriteCtx<'_>,
    name: &str,
    mode: Mode,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    let rt = ctx.rt;
    match (mode, old) {
        (Mode::Create, Some(_)) => Err(ApiError::already_exists(&rt.group, &rt.plural, name)),
        (Mode::Update, None) => Err(ApiError::not_found(&rt.group, &rt.plural, name)),
        (Mode::Apply, None) => ctx.authorize_create.map_or(Ok(()), |authorize| authorize()),
        _ => Ok(()),
    }
}

/// The write path with admission webhooks (see [`write`]).
fn write_admitted(
    ctx: &WriteCtx<'_>,
    name: &str,
    mode: Mode,
    produce: impl FnOnce(Option<&Value>) -> Result<Candidate, ApiError>,
    webhooks: &dyn WebhookSet,
) -> Result<Outcome, ApiError> {
    let rt = ctx.rt;
    let rk = rt.store_key();
    let store_ns = if rt.namespaced { ctx.ns } else { "" };
    let mut produce = Some(produce);
    let mut apply_config = None;
    for _ in 0..5 {
        let old = ctx.backend.store.get(&rk, store_ns, name)?;
        precheck(ctx, name, mode, old.as_ref())?;
        if old.is_none() && rt.namespaced {
            namespace_usable(ctx.backend.store.get("/namespaces", "", ctx.ns)?, ctx.ns)?;
        }
        let view = old.clone().map(|o| convert::from_storage(rt, o));
        let cand = match (produce.take(), apply_config.take()) {
            (Some(p), _) => p(view.as_ref())?,
            (None, Some((config, force))) => Candidate::Apply { config, force },
            (None, None) => break,
        };
        if let Candidate::Apply { config, force } = &cand {
            apply_config = Some((config.clone(), *force));
        }
        let mut warnings = Vec::new();
        let built = build(
            ctx,
            name,
            view.as_ref(),
            cand,
            &mut warnings,
            Some(webhooks),
        )?;
        let stored = ctx.backend.store.write(|w| {
            let now = w.get(&rk, store_ns, name)?;
            if now.as_ref().map(rv_of) != old.as_ref().map(rv_of) {
                precheck(ctx, name, mode, now.as_ref())?;
                return Ok(None);
            }
            if now.is_none() && rt.namespaced {
                check_namespace(w, ctx.ns)?;
            }
            store(w, ctx, name, now, built, warnings).map(Some)
        })?;
        if let Some(outcome) = stored {
            return Ok(outcome);
        }
    }
    Err(ApiError::conflict(
        &rt.group,
        &rt.plural,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    ))
}

/// Stores a built object (unless nothing changed or this is a dry run).
fn store(
    w: &mut Writer<'_>,
    ctx: &WriteCtx<'_>,
    name: &str,
    old: Option<Value>,
    built: Option<Value>,
    warnings: Vec<String>,
) -> Result<Outcome, ApiError> {
    let Some(new) = built else {
        return Ok(Outcome {
            object: old.unwrap_or(Value::Null),
            created: false,
            warnings,
        });
    };
    let mut new = convert::to_storage(ctx.rt, new);
    let created = old.is_none();
    if ctx.dry_run {
        return Ok(Outcome {
            object: new,
            created,
            warnings,
        });
    }
    let rk = ctx.rt.store_key();
    let store_ns = if ctx.rt.namespaced { ctx.ns } else { "" };
    let rv = w.next_rv()?;
    meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
    if new.pointer("/metadata/deletionTimestamp").is_some() && ctx.rt.strategy().finalized(&new) {
        w.delete(&rk, store_ns, name, rv, new.clone())?;
        // The last object of a terminating namespace lets the namespace go.
        crate::registry::kinds::namespace::lifecycle::object_gone(w, store_ns)?;
    } else {
        let kind = if created {
            EventType::Added
        } else {
            EventType::Modified
        };
        w.put(&rk, store_ns, name, rv, new.clone(), kind)?;
        if let Some(old) = old {
            w.attach_prev(old);
        }
    }
    Ok(Outcome {
        object: new,
        created,
        warnings,
    })
}
