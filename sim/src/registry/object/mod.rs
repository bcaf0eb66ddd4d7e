//! The write pipeline every mutating verb goes through: decode checks and field validation, merge
//! (apply) or replacement, system metadata, defaulting, generation, managedFields, no-op detection,
//! then (unless a dry run) the store write with a new resourceVersion.

mod commit;
mod decode;
mod parts;
pub(crate) mod random;

pub use commit::write;
use decode::decode_checks;
pub use decode::{decode_error, patch_decode_error};

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;
use crate::registry::admission::WebhookSet;
use crate::registry::backend::Backend;
use crate::registry::fields::managed::{self, ApplyRequest};
use crate::registry::schema::Node;
use crate::registry::validate::{self, FieldValidation};
use crate::status::ApiError;
use crate::storage::Writer;

/// The context of one write request.
pub struct WriteCtx<'a> {
    /// The storage backend: store, served types, admission.
    pub backend: &'a Backend,
    /// The resource type written.
    pub rt: &'a ResourceType,
    /// The namespace (`""` for cluster-scoped types).
    pub ns: &'a str,
    /// `""`, `status` or `scale`.
    pub subresource: &'a str,
    /// The field manager (`fieldManager`, or defaulted from the user agent).
    pub manager: String,
    /// Whether the request is a dry run (`dryRun=All`): nothing is stored.
    pub dry_run: bool,
    /// The `fieldValidation` asked for.
    pub validation: FieldValidation,
    /// For a server-side apply: authorizes the create it turns into when the object does not exist
    /// (kube-apiserver's `withAuthorization` around the create validation); checked inside the write,
    /// so an apply that finds its object gone on a retry is checked too.
    pub authorize_create: Option<&'a dyn Fn() -> Result<(), ApiError>>,
}

/// What the request wants the object to become.
pub enum Candidate {
    /// A whole object (create, PUT, or the result of a non-apply patch).
    Replace(Value),
    /// A server-side apply configuration.
    Apply {
        /// The apply configuration.
        config: Value,
        /// `force=true`: take over fields other managers own.
        force: bool,
    },
}

/// Whether the object must or must not exist beforehand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The object must not exist (POST).
    Create,
    /// The object must exist (PUT, non-apply PATCH).
    Update,
    /// The object may or may not exist (server-side apply).
    Apply,
}

/// The result of a write.
pub struct Outcome {
    /// The object as stored (or as it would be, for a dry run).
    pub object: Value,
    /// Whether the write created the object.
    pub created: bool,
    /// Warnings to send in `Warning` headers (e.g. unknown fields under `fieldValidation=Warn`).
    pub warnings: Vec<String>,
}

/// Kinds whose objects carry `metadata.generation`.
fn has_generation(rt: &ResourceType) -> bool {
    strategy(rt).has_generation()
}

fn strategy(rt: &ResourceType) -> &'static dyn crate::registry::strategy::Strategy {
    crate::registry::strategy::for_kind(&rt.group, &rt.kind, rt.crd)
}

/// A random version-4 UUID.
pub fn new_uid() -> String {
    let b: [u8; 16] = random::bytes();
    let h: String = b
        .iter()
        .enumerate()
        .map(|(i, x)| match i {
            6 => format!("{:02x}", (x & 0x0f) | 0x40),
            8 => format!("{:02x}", (x & 0x3f) | 0x80),
            _ => format!("{x:02x}"),
        })
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn cluster_ip_for(ns: &str, name: &str) -> String {
    let mut h: u32 = 2_166_136_261;
    for b in ns.bytes().chain([b'/']).chain(name.bytes()) {
        h = (h ^ b as u32).wrapping_mul(16_777_619);
    }
    format!("10.96.{}.{}", (h >> 8) % 256, (h % 254) + 1)
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}

/// `metadata.resourceVersion` of an object.
pub fn rv_of(obj: &Value) -> &str {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn without(obj: &Value, keys: &[&str]) -> Value {
    match obj {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Puts `apiVersion` and `kind` first, as the real server's output does.
fn with_type_first(rt: &ResourceType, obj: Value) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(rt.api_version()));
    out.insert("kind".into(), json!(rt.kind));
    if let Value::Object(m) = obj {
        for (k, v) in m {
            if k != "apiVersion" && k != "kind" {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

/// Builds the object a write would store, from the current object and the candidate. Returns
/// `None` when nothing would change.
fn build(
    ctx: &WriteCtx<'_>,
    name: &str,
    old: Option<&Value>,
    cand: Candidate,
    warnings: &mut Vec<String>,
    webhooks: Option<&dyn WebhookSet>,
) -> Result<Option<Value>, ApiError> {
    let rt = ctx.rt;
    let node = Node::root(rt);
    let now = crate::time::now_rfc3339();
    let status_sep = rt.status_subresource;
    let sub = ctx.subresource;
    let is_apply = matches!(cand, Candidate::Apply { .. });
    let mut new = match cand {
        Candidate::Replace(mut body) => {
            decode_checks(ctx, name, &mut body, warnings)?;
            if let Some(old) = old {
                stale_version_check(rt, name, &body, old)?;
            }
            match (sub, old) {
                ("status", Some(old)) => {
                    let mut n = old.clone();
                    match body.get("status") {
                        Some(s) => n["status"] = s.clone(),
                        None => {
                            if let Value::Object(m) = &mut n {
                                m.remove("status");
                            }
                        }
                    }
                    n
                }
                ("ephemeralcontainers" | "resize" | "approval", Some(old)) => {
                    parts::subresource_part(sub, old, &body)
                }
                (_, Some(old)) if status_sep => {
                    let mut n = body;
                    match old.get("status") {
                        Some(s) => n["status"] = s.clone(),
                        None => n = without(&n, &["status"]),
                    }
                    n
                }
                (_, None) if status_sep => without(&body, &["status"]),
                _ => body,
            }
        }
        Candidate::Apply { mut config, force } => {
            decode_checks(ctx, name, &mut config, warnings)?;
            let api_version = rt.api_version();
            let req = ApplyRequest {
                manager: &ctx.manager,
                api_version: &api_version,
                subresource: sub,
                status_separate: status_sep,
                force,
                now: &now,
            };
            let live = old.map(|o| without(o, &[]));
            let applied =
                managed::apply(live.as_ref(), &config, node, &req).map_err(|conflicts| {
                    let (message, causes) = managed::conflict_message(&conflicts);
                    ApiError::apply_conflict(&rt.group, &rt.plural, name, message, causes)
                })?;
            // As in kube-apiserver: field ownership is settled first (the patcher), then the
            // storage update checks the resourceVersion the configuration carries.
            if let Some(old) = old {
                stale_version_check(rt, name, &config, old)?;
            }
            applied
        }
    };

    // System metadata.
    {
        let meta = meta_mut(&mut new);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            meta.insert("namespace".into(), json!(ctx.ns));
        } else {
            meta.remove("namespace");
        }
        meta.remove("selfLink");
        for k in [
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
        ] {
            meta.remove(k);
            if let Some(v) = old.and_then(|o| o.pointer(&format!("/metadata/{k}"))) {
                meta.insert(k.into(), v.clone());
            }
        }
        if old.is_none() {
            meta.insert("uid".into(), json!(new_uid()));
            meta.insert("creationTimestamp".into(), json!(now));
            if has_generation(rt) {
                meta.insert("generation".into(), json!(1));
            }
        }
    }
    let mut new = with_type_first(rt, new);
    if let crate::registry::SchemaSource::Builtin(_) = &rt.schema {
        crate::registry::fields::times::normalize(&mut new, Node::root(rt));
        crate::registry::fields::omitempty::drop_empty(&mut new, Node::root(rt));
    }
    // Fields the registry allocates (a Service's cluster IPs) that the request left out: like
    // `PrepareForCreate`'s, they are nobody's.
    let unsent: Vec<&str> = strategy(rt)
        .allocated()
        .iter()
        .copied()
        .filter(|p| new.pointer(p).is_none())
        .collect();
    let ip = cluster_ip_for(ctx.ns, name);
    crate::registry::per_kind::apply_defaults(&rt.api_version(), &rt.kind, &mut new, &mut || {
        ip.clone()
    });
    strategy(rt).derive_status(&mut new);
    // What `PrepareForCreate` adds (a Namespace's finalizers, a Job's selector) comes after
    // kube-apiserver's field manager has recorded the request's fields: it is owned by no one.
    let mut unprepared = None;
    if let Some(old) = old
        && sub.is_empty()
    {
        strategy(rt).prepare_update(old, &mut new);
    }
    if old.is_none() {
        let mut before = new.clone();
        strategy(rt).prepare_create(&mut new);
        if before != new || !unsent.is_empty() {
            for p in &unsent {
                if let Some((parent, key)) = p.rsplit_once('/')
                    && let Some(Value::Object(m)) = before.pointer_mut(parent)
                {
                    m.remove(key);
                }
            }
            unprepared = Some(before);
        }
    }
    if let crate::registry::SchemaSource::Crd(schema) = &rt.schema {
        crate::registry::crd::apply_defaults(&mut new, schema);
    }
    let plugins: Vec<_> = ctx
        .backend
        .admission
        .read()
        .map(|p| p.clone())
        .unwrap_or_default();
    let areq = crate::registry::admission::AdmissionRequest {
        operation: if old.is_none() { "CREATE" } else { "UPDATE" },
        resource: rt,
        namespace: ctx.ns,
        name,
        subresource: sub,
        old,
        dry_run: ctx.dry_run,
        manager: &ctx.manager,
        uid: webhooks.map(|_| new_uid()).unwrap_or_default(),
        propagation: None,
    };
    for p in &plugins {
        p.mutate(&areq, &mut new)?;
    }
    if let Some(hooks) = webhooks {
        hooks.mutate(&ctx.backend.store, &areq, Some(&mut new), warnings)?;
    }
    let mut causes = if old.is_none() {
        validate::name_causes(rt.strategy().name_rule(), name)
    } else {
        Vec::new()
    };
    causes.extend(crate::registry::per_kind::check(
        &rt.api_version(),
        &rt.kind,
        &new,
    ));
    if let Some(old) = old {
        causes.extend(crate::registry::per_kind::check_update(
            &rt.api_version(),
            &rt.kind,
            old,
            &new,
        ));
        causes.extend(crate::registry::kinds::namespace::lifecycle::no_new_finalizers(old, &new));
    }
    if let crate::registry::SchemaSource::Crd(schema) = &rt.schema {
        crate::registry::crd::validate(
            &without(&new, &["metadata", "apiVersion", "kind"]),
            schema,
            "",
            &mut causes,
        );
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(&rt.group, &rt.kind, name, causes));
    }
    for p in &plugins {
        p.validate(&areq, &new)?;
    }
    if let Some(hooks) = webhooks {
        hooks.validate(&ctx.backend.store, &areq, Some(&new), warnings)?;
    }
    if let Some(old) = old {
        let skip = ["metadata", "status"];
        if has_generation(rt) && without(old, &skip) != without(&new, &skip) {
            let g = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
    }
    if !is_apply {
        let api_version = rt.api_version();
        let req = ApplyRequest {
            manager: &ctx.manager,
            api_version: &api_version,
            subresource: sub,
            status_separate: status_sep,
            force: true,
            now: &now,
        };
        match unprepared {
            // (Admission may have changed the object since: then its fields are counted as they are.)
            Some(mut before) if plugins.is_empty() && webhooks.is_none() => {
                managed::update(old, &mut before, node, &req);
                if let Some(fields) = before.pointer("/metadata/managedFields").cloned() {
                    meta_mut(&mut new).insert("managedFields".into(), fields);
                }
            }
            _ => managed::update(old, &mut new, node, &req),
        }
    }
    if let Some(old) = old {
        if *old == new {
            return Ok(None);
        }
        if is_apply {
            // Something changed: the applier's entry gets the current time.
            let mut entries = managed::read_entries(Some(&new));
            if let Some(e) = entries.iter_mut().find(|e| {
                e.manager == ctx.manager && e.operation == "Apply" && e.subresource == sub
            }) {
                e.time = now.clone();
            }
            managed::write_entries(&mut new, &entries);
            if without(old, &["metadata"]) == without(&new, &["metadata"])
                && old.pointer("/metadata/managedFields").map(strip_times)
                    == new.pointer("/metadata/managedFields").map(strip_times)
                && without(&old["metadata"], &["managedFields"])
                    == without(&new["metadata"], &["managedFields"])
            {
                return Ok(None);
            }
        }
    }
    Ok(Some(new))
}

/// The optimistic-concurrency check of updates and server-side applies: a `metadata.resourceVersion`
/// in the request that is not the stored one is a 409 Conflict (none at all is an unconditional write).
fn stale_version_check(
    rt: &ResourceType,
    name: &str,
    body: &Value,
    old: &Value,
) -> Result<(), ApiError> {
    let want = rv_of(body);
    if want.is_empty() || want == rv_of(old) {
        return Ok(());
    }
    Err(ApiError::conflict(
        &rt.group,
        &rt.plural,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    ))
}

fn strip_times(mf: &Value) -> Value {
    match mf {
        Value::Array(a) => Value::Array(a.iter().map(|e| without(e, &["time"])).collect()),
        other => other.clone(),
    }
}

fn check_namespace(w: &Writer<'_>, ns: &str) -> Result<(), ApiError> {
    namespace_usable(w.get("/namespaces", "", ns)?, ns)
}

fn namespace_usable(namespace: Option<Value>, ns: &str) -> Result<(), ApiError> {
    match namespace {
        None => Err(ApiError::not_found("", "namespaces", ns)),
        Some(n) if n.pointer("/metadata/deletionTimestamp").is_some() => {
            Err(ApiError::forbidden(format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            )))
        }
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_look_like_uuids() {
        let u = new_uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(u, new_uid());
    }

    #[test]
    fn cluster_ips_are_stable() {
        assert_eq!(
            cluster_ip_for("default", "web"),
            cluster_ip_for("default", "web")
        );
        assert!(cluster_ip_for("default", "web").starts_with("10.96."));
    }
}
