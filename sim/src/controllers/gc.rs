//! Background garbage collection: ReplicaSets and Pods whose owners (by ownerReference uid) are all
//! gone are deleted. Deletes through the API already cascade in the same transaction; this catches
//! dependents created in a race with their owner's deletion.

use std::collections::HashMap;

use serde_json::Value;

use super::util::{self, rt, s};
use crate::app::App;
use crate::registry::ResourceType;

/// One turn over the kinds the controllers create.
pub fn reconcile(app: &App) {
    let mut types: HashMap<(String, String), Option<ResourceType>> = HashMap::new();
    for (group, plural) in [
        ("apps", "replicasets"),
        ("apps", "controllerrevisions"),
        ("", "pods"),
        ("discovery.k8s.io", "endpointslices"),
    ] {
        let Ok(kind) = rt(app, group, "v1", plural) else {
            continue;
        };
        for obj in util::list(app, &kind) {
            let Some(refs) = obj
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let ns = s(&obj, "/metadata/namespace");
            let alive = refs.iter().any(|r| owner_exists(app, &mut types, ns, r));
            if !alive {
                let _ = util::remove(app, &kind, ns, s(&obj, "/metadata/name"));
            }
        }
    }
}

fn owner_exists(
    app: &App,
    types: &mut HashMap<(String, String), Option<ResourceType>>,
    ns: &str,
    r: &Value,
) -> bool {
    let key = (s(r, "/apiVersion").to_string(), s(r, "/kind").to_string());
    let Some(ort) = types
        .entry(key)
        .or_insert_with_key(|(av, k)| app.registry.by_kind(av, k))
        .as_ref()
    else {
        // An owner of a kind this server does not serve: leave the dependent alone.
        return true;
    };
    let ons = if ort.namespaced { ns } else { "" };
    match app.store.get(&ort.store_key(), ons, s(r, "/name")) {
        Ok(Some(o)) => util::uid(&o) == s(r, "/uid"),
        Ok(None) => false,
        Err(_) => true,
    }
}
