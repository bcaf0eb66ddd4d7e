//! Objects of custom resource kinds (`resource GROUP/VERSION/KIND NAME { … }`): the block's fields as
//! written, under the app's metadata. Rendered with the workloads (the engine's level for kinds it does
//! not rank): a Certificate's Secret is issued while the pods that mount it start, and routes and
//! monitors need no order (their controllers resolve the Services they name when those appear).

use super::Sink;
use super::json;
use super::meta::Cx;
use crate::error::Error;
use serde_json::Value;

pub(super) fn resources(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for r in &cx.app.resources {
        let metadata = if r.namespaced {
            cx.meta(&r.name.v, &r.labels, &r.annotations)
        } else {
            cx.cluster_meta(&r.name.v, &r.labels, &r.annotations)
        };
        let mut object = serde_json::Map::new();
        object.insert("apiVersion".into(), Value::String(r.api_version.clone()));
        object.insert("kind".into(), Value::String(r.kind.clone()));
        object.insert("metadata".into(), json(&r.kind, &metadata)?);
        if let Value::Object(fields) = r.fields.to_json() {
            object.extend(fields);
        }
        out.push(Value::Object(object));
    }
    Ok(())
}
