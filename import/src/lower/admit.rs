//! What the importer admits before lowering: objects a 1.33 API server would refuse as written — a name
//! its kind does not allow (PCL0182), NetworkPolicy selector labels that are not valid label keys and
//! string values (PCL0218) — are left out with their JSON in a comment at the end of the module, so the
//! generated module still builds; objects of other namespaces are warned (PCL0183) and imported into the
//! target's.

use super::{Cx, describe};
use crate::error::Warning;
use piceli_core::Code;
use piceli_core::include::CLUSTER_SCOPED;
use piceli_core::rules;
use serde_json::Value;

/// The objects to lower, without those left out.
pub(super) fn admit(cx: &mut Cx, objects: Vec<Value>) -> Vec<Value> {
    let mut kept = Vec::new();
    for o in objects {
        let what = describe(&o);
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        // The rule of its kind, as the API server checks it (RBAC names are path segments, so
        // `system:aggregate-to-view` is imported; Services are RFC 1035 labels); a custom resource's name
        // is its CRD's business, but is still a path segment.
        let api_version = o["apiVersion"].as_str().unwrap_or_default();
        let kind = o["kind"].as_str().unwrap_or_default();
        let verdict = rules::names::object_name(api_version, kind, name)
            .unwrap_or_else(|| rules::names::path_segment(name));
        if let Err(e) = verdict {
            leave_out(
                cx,
                &o,
                Code::ImportInvalidName,
                format!("its name is not a valid {kind} name: {}", e.message),
            );
            continue;
        }
        if let Some(problem) = refused_selector(&o) {
            leave_out(cx, &o, Code::ImportRefusedSelector, problem);
            continue;
        }
        if let Some(ns) = o["metadata"]["namespace"].as_str()
            && ns != cx.namespace
            && !CLUSTER_SCOPED.contains(&kind)
        {
            let message = format!(
                "it names namespace `{ns}`; imported into the target's `{}`",
                cx.namespace
            );
            cx.out
                .warnings
                .push(Warning::new(Code::ImportOtherNamespace, &what, message));
        }
        kept.push(o);
    }
    kept
}

/// A warning, and the object's JSON in a comment at the end of the module.
fn leave_out(cx: &mut Cx, o: &Value, code: Code, why: String) {
    let what = describe(o);
    let json = serde_json::to_string(o).unwrap_or_default();
    cx.out.warnings.push(Warning::new(
        code,
        &what,
        format!("{why}; left out (its JSON is in a comment at the end)"),
    ));
    cx.out
        .module
        .trailer
        .push(format!("piceli: {code} {what} left out, {why}:\n{json}"));
}

/// What is wrong with a NetworkPolicy's selectors (`podSelector`, and the peers' `podSelector` and
/// `namespaceSelector`): no `podSelector`, a label key or value the API server refuses, a value that is not
/// a string, `matchLabels` that is not a map.
fn refused_selector(o: &Value) -> Option<String> {
    if o["kind"] != "NetworkPolicy" {
        return None;
    }
    let spec = &o["spec"];
    if spec.is_object() && !spec["podSelector"].is_object() {
        return Some("it has no `spec.podSelector` (`{}` selects every pod)".into());
    }
    let mut selectors = vec![&spec["podSelector"]];
    for (rules_key, peers_key) in [("ingress", "from"), ("egress", "to")] {
        for rule in spec[rules_key].as_array().into_iter().flatten() {
            for peer in rule[peers_key].as_array().into_iter().flatten() {
                selectors.push(&peer["podSelector"]);
                selectors.push(&peer["namespaceSelector"]);
            }
        }
    }
    selectors
        .into_iter()
        .find_map(|s| map_problem(&s["matchLabels"], "selector label"))
}

/// The first key or value of a label map the API server refuses (or a map that is not one).
fn map_problem(labels: &Value, what: &str) -> Option<String> {
    let labels = match labels {
        Value::Null => return None,
        Value::Object(m) => m,
        other => return Some(format!("{what}s are {other}, not a map")),
    };
    for (k, v) in labels {
        if let Err(e) = rules::label_key(k) {
            return Some(format!("{what} key: {}", e.message));
        }
        match v.as_str() {
            None => {
                return Some(format!(
                    "{what} `{k}` has the value {v}, which is not a string"
                ));
            }
            Some(value) => {
                if let Err(e) = rules::label_value(value) {
                    return Some(format!("{what} `{k}`: {}", e.message));
                }
            }
        }
    }
    None
}
