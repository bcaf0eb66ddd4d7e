//! The `scale` subresource (`autoscaling/v1` Scale) over a type's replicas paths.

use serde_json::{Value, json};

use super::Resolved;
use super::write::decode_body;
use crate::apiserver::app::App;
use crate::apiserver::http::{Req, Resp, json as json_resp};
use crate::registry::object::{self, Candidate, Mode, WriteCtx};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;

fn pointer(path: &str) -> String {
    format!("/{}", path.trim_start_matches('.').replace('.', "/"))
}

fn selector_string(obj: &Value, label_path: Option<&str>) -> String {
    if let Some(s) = label_path
        .and_then(|p| obj.pointer(&pointer(p)))
        .and_then(Value::as_str)
    {
        return s.to_string();
    }
    obj.pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

fn to_scale(r: &Resolved, obj: &Value) -> Value {
    let Some(paths) = &r.rt.scale else {
        return Value::Null;
    };
    let meta = &obj["metadata"];
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"], "creationTimestamp": meta["creationTimestamp"]},
        "spec": {"replicas": obj.pointer(&pointer(&paths.spec_replicas)).cloned().unwrap_or(json!(0))},
        "status": {"replicas": obj.pointer(&pointer(&paths.status_replicas)).cloned().unwrap_or(json!(0)),
            "selector": selector_string(obj, paths.label_selector.as_deref())},
    });
    // autoscaling/v1 `ScaleSpec.replicas` is `omitempty`: zero replicas is an empty spec.
    if scale["spec"]["replicas"] == json!(0) {
        scale["spec"] = json!({});
    }
    scale
}

/// GET, PUT or PATCH `.../NAME/scale`.
pub fn handle(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let ns = if r.rt.namespaced { r.ns.as_str() } else { "" };
    let Some(paths) = &r.rt.scale else {
        return Err(ApiError::no_route());
    };
    if req.method == http::Method::GET {
        super::check_path_name(name)?;
        let obj = app
            .backend
            .store
            .get(&r.rt.store_key(), ns, name)?
            .ok_or_else(|| ApiError::not_found(&r.rt.group, &r.rt.plural, name))?;
        return Ok(json_resp(200, &to_scale(r, &obj)));
    }
    super::write::options(req)?;
    if req.method != http::Method::PUT {
        super::check_path_name(name)?;
    }
    // An update's body is read (and its name checked) first; a patch's once the object is found.
    let put_body = if req.method == http::Method::PUT {
        let body = decode_body(req)?;
        super::write::check_name(&body, name, &r.ns)?;
        super::check_path_name(name)?;
        Some(body)
    } else {
        None
    };
    let manager = req
        .query
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .map(String::from)
        .unwrap_or_else(|| req.user_agent_manager());
    let c = WriteCtx {
        backend: &app.backend,
        rt: &r.rt,
        ns: &r.ns,
        subresource: "scale",
        manager,
        dry_run: req.query.dry_run(super::write::options_kind(req))?,
        validation: FieldValidation::Ignore,
        authorize_create: None,
    };
    let ct = req.content_type().to_string();
    let spec_ptr = pointer(&paths.spec_replicas);
    let out = object::write(&c, name, Mode::Update, |old| {
        let old = old.ok_or_else(|| ApiError::not_found(&r.rt.group, &r.rt.plural, name))?;
        let body = match put_body {
            Some(b) => b,
            None => decode_body(req)?,
        };
        let current = to_scale(r, old);
        let wanted = match (req.method.as_str(), ct.as_str()) {
            ("PUT", _) => body.clone(),
            (_, "application/json-patch+json") => {
                let ops: json_patch::Patch = serde_json::from_value(body.clone())
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                let mut s = current.clone();
                json_patch::patch(&mut s, &ops)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                s
            }
            _ => {
                let mut s = current.clone();
                json_patch::merge(&mut s, &body);
                s
            }
        };
        let rv = wanted
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !rv.is_empty() && rv != object::rv_of(old) {
            return Err(ApiError::conflict(
                &r.rt.group,
                &r.rt.plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let replicas = wanted
            .pointer("/spec/replicas")
            .cloned()
            .unwrap_or(json!(0));
        if replicas.as_i64().is_none_or(|n| n < 0) {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                name,
                vec![crate::status::Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {replicas}: must be greater than or equal to 0"
                    ),
                    field: "spec.replicas".into(),
                }],
            ));
        }
        let mut new = old.clone();
        if let Some(slot) = new.pointer_mut(&spec_ptr) {
            *slot = replicas;
        } else if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
            let key = spec_ptr
                .rsplit('/')
                .next()
                .unwrap_or("replicas")
                .to_string();
            spec.insert(key, replicas);
        }
        Ok(Candidate::Replace(new))
    })?;
    Ok(json_resp(200, &to_scale(r, &out.object)))
}
