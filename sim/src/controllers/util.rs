//! Helpers the controllers share: reading objects, and writing them through the API's write
//! pipeline (create, update of the object or its status, delete) under a field manager.

use serde_json::{Value, json};

use crate::app::App;
use crate::registry::ResourceType;
use crate::registry::delete::{self, DeleteOptions};
use crate::registry::object::{self, Candidate, Mode, WriteCtx};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;

/// The served type at `group/version/plural`.
pub fn rt(app: &App, group: &str, version: &str, plural: &str) -> Result<ResourceType, ApiError> {
    app.registry
        .lookup(group, version, plural)
        .ok_or_else(|| ApiError::internal(format!("type {group}/{version}/{plural} not served")))
}

/// Every object of a type, in every namespace, shared with the other controllers: parsed once per
/// change of the type ([`super::informer::Informers`]). A controller lists only kinds it declares to watch (`table.rs`; checked in debug builds).
pub fn list(app: &App, rt: &ResourceType) -> std::sync::Arc<Vec<Value>> {
    let rk = rt.store_key();
    super::table::debug_check_declared(&rk);
    app.informers.list(&app.store, &rk)
}

/// `objects` (those `keep` accepts) by the uid of their controller owner: found once per turn, not
/// searched once per owner (which made a turn quadratic in the number of objects).
pub fn by_controller(
    objects: &[Value],
    keep: impl Fn(&Value) -> bool,
) -> std::collections::HashMap<&str, Vec<&Value>> {
    let mut out: std::collections::HashMap<&str, Vec<&Value>> = std::collections::HashMap::new();
    for o in objects.iter().filter(|o| keep(o)) {
        if let Some(owner) = controller_uid(o) {
            out.entry(owner).or_default().push(o);
        }
    }
    out
}

/// A string at a JSON pointer, or "".
pub fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// An integer at a JSON pointer, or `default`.
pub fn i(v: &Value, ptr: &str, default: i64) -> i64 {
    v.pointer(ptr).and_then(Value::as_i64).unwrap_or(default)
}

/// `metadata.uid`.
pub fn uid(v: &Value) -> &str {
    s(v, "/metadata/uid")
}

/// Whether the object is being deleted.
pub fn terminating(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some()
}

/// The uid of the object's controller owner reference, if any.
pub fn controller_uid(v: &Value) -> Option<&str> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// An owner reference to `owner` marking it as the controller.
pub fn owner_ref(owner: &Value) -> Value {
    serde_json::json!({
        "apiVersion": s(owner, "/apiVersion"),
        "kind": s(owner, "/kind"),
        "name": s(owner, "/metadata/name"),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

fn ctx<'a>(
    app: &'a App,
    rt: &'a ResourceType,
    ns: &'a str,
    sub: &'a str,
    manager: &str,
) -> WriteCtx<'a> {
    WriteCtx {
        app,
        rt,
        ns,
        subresource: sub,
        manager: manager.to_string(),
        dry_run: false,
        validation: FieldValidation::Ignore,
        authorize_create: None,
    }
}

/// Creates an object.
pub fn create(
    app: &App,
    rt: &ResourceType,
    ns: &str,
    obj: Value,
    manager: &str,
) -> Result<Value, ApiError> {
    let name = s(&obj, "/metadata/name").to_string();
    let c = ctx(app, rt, ns, "", manager);
    object::write(&c, &name, Mode::Create, |_| Ok(Candidate::Replace(obj))).map(|o| o.object)
}

/// Updates an object (`sub` "" or "status") by changing the current one with `change`, inside
/// the write transaction; `change` returning false leaves it alone.
pub fn update(
    app: &App,
    rt: &ResourceType,
    ns: &str,
    name: &str,
    sub: &str,
    manager: &str,
    change: impl FnOnce(&mut Value) -> bool,
) -> Result<(), ApiError> {
    let c = ctx(app, rt, ns, sub, manager);
    object::write(&c, name, Mode::Update, |old| {
        let mut new = old.cloned().unwrap_or(Value::Null);
        if !change(&mut new) {
            return Err(ApiError::bad_request("unchanged"));
        }
        Ok(Candidate::Replace(new))
    })
    .map(|_| ())
}

/// Deletes an object, its dependents in the background.
pub fn remove(app: &App, rt: &ResourceType, ns: &str, name: &str) -> Result<(), ApiError> {
    delete::delete(app, rt, ns, name, &DeleteOptions::default()).map(|_| ())
}

/// Records a core/v1 Event about `about` (best effort), as the named component would.
pub fn event(
    app: &App,
    about: &Value,
    warning: bool,
    reason: &str,
    message: &str,
    component: &str,
) {
    let Some(events) = app.registry.lookup("", "v1", "events") else {
        return;
    };
    let ns = match s(about, "/metadata/namespace") {
        "" => "default",
        n => n,
    };
    let now = crate::time::now_rfc3339();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = format!("{}.{nanos:x}", s(about, "/metadata/name"));
    let ev = serde_json::json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {
            "apiVersion": s(about, "/apiVersion"), "kind": s(about, "/kind"),
            "namespace": s(about, "/metadata/namespace"), "name": s(about, "/metadata/name"),
            "uid": uid(about), "resourceVersion": s(about, "/metadata/resourceVersion"),
        },
        "reason": reason, "message": message,
        "source": {"component": component},
        "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        "type": if warning { "Warning" } else { "Normal" },
        "reportingComponent": component, "reportingInstance": "",
    });
    let _ = create(app, &events, ns, ev, component);
}

/// A workload's pod template, for a new pod. The sim-only `sim.piceli.dev/behavior` annotation may
/// be set on the workload itself (a ReplicaSet gets its Deployment's annotations): the template
/// inherits it unless it has its own, so apps whose DSL has no pod-template annotations can ask
/// for a failure too.
pub fn pod_template(owner: &Value) -> Value {
    let mut tmpl = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(json!({}));
    let key = super::BEHAVIOR_ANNOTATION;
    let inherited = owner
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .cloned();
    let own = tmpl
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key));
    if let (Some(b), None) = (inherited, own) {
        if !tmpl["metadata"].is_object() {
            tmpl["metadata"] = json!({});
        }
        if !tmpl["metadata"]["annotations"].is_object() {
            tmpl["metadata"]["annotations"] = json!({});
        }
        tmpl["metadata"]["annotations"][key] = b;
    }
    tmpl
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn pods_inherit_the_workloads_behavior_unless_the_template_has_its_own() {
        let key = super::super::BEHAVIOR_ANNOTATION;
        let owner = json!({
            "metadata": {"annotations": {key: "crash-loop"}},
            "spec": {"template": {"spec": {"containers": []}}}
        });
        assert_eq!(
            pod_template(&owner)["metadata"]["annotations"][key],
            "crash-loop"
        );
        let own = json!({
            "metadata": {"annotations": {key: "crash-loop"}},
            "spec": {"template": {"metadata": {"annotations": {key: "never-ready"}}}}
        });
        assert_eq!(
            pod_template(&own)["metadata"]["annotations"][key],
            "never-ready"
        );
        let plain = json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}});
        assert_eq!(pod_template(&plain), plain["spec"]["template"]);
    }
}
