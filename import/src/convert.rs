//! Objects of API versions Kubernetes no longer serves, rewritten to the version that serves their kind
//! in 1.33 (the table is `piceli_core::removed`), as the API server converts stored objects: fields that
//! moved are moved, a default the old version had and the new one changed is written out, and what has no
//! place in the new version is reported. Conversions that would change meaning (webhook configurations,
//! CRD schemas, flow control) are not guessed: those objects are reported and left for the user.

use piceli_core::removed::removed;
use serde_json::{Map, Value, json};

/// What [`to_served`] did with an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conversion {
    /// Rewritten to `to`; `notes` say what changed beyond the apiVersion.
    Converted {
        /// The old apiVersion.
        from: String,
        /// The new one.
        to: String,
        /// The release that stopped serving the old one.
        removed_in: &'static str,
        /// What else changed.
        notes: Vec<String>,
    },
    /// Left as written: `reason` says why and what to do.
    Kept {
        /// The object's apiVersion.
        from: String,
        /// Why it was not converted.
        reason: String,
    },
}

impl Conversion {
    /// One line for the warning and the `// piceli:` comment.
    pub fn message(&self) -> String {
        match self {
            Conversion::Converted {
                from,
                to,
                removed_in,
                notes,
            } => {
                let mut m = format!(
                    "{from} is not served since Kubernetes {removed_in}; converted to {to}"
                );
                for n in notes {
                    m.push_str("; ");
                    m.push_str(n);
                }
                m
            }
            Conversion::Kept { from, reason } => format!("{from} {reason}"),
        }
    }
}

/// Rewrites `o` in place when its apiVersion is a removed built-in one; `None` when it is served (or not
/// built in).
pub fn to_served(o: &mut Value) -> Option<Conversion> {
    let from = o["apiVersion"].as_str()?.to_string();
    let kind = o["kind"].as_str()?.to_string();
    let gone = removed(&from, &kind)?;
    let Some(to) = gone.replacement else {
        return Some(Conversion::Kept {
            from,
            reason: format!(
                "is not served since Kubernetes {}, and {kind} has no replacement",
                gone.removed_in
            ),
        });
    };
    let by_hand = |what: &str| Conversion::Kept {
        from: from.clone(),
        reason: format!(
            "is not served since Kubernetes {}: rewrite it for {to} by hand ({what})",
            gone.removed_in
        ),
    };
    let mut notes = Vec::new();
    match kind.as_str() {
        "Deployment" | "DaemonSet" | "ReplicaSet" | "StatefulSet" => {
            workload(o, &from, &kind, &mut notes)
        }
        "Ingress" => ingress(o, &mut notes),
        "HorizontalPodAutoscaler" if from == "autoscaling/v2beta1" => {
            autoscaler_v2beta1(o, &mut notes)
        }
        "PodDisruptionBudget" if empty_selector(&o["spec"]["selector"]) => notes.push(
            "its selector is empty: in policy/v1beta1 that selected no pods, in policy/v1 it selects every pod of the namespace"
                .into(),
        ),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            return Some(by_hand(
                "v1 requires sideEffects and admissionReviewVersions and defaults failurePolicy to Fail, matchPolicy to Equivalent and timeoutSeconds to 10",
            ));
        }
        "CustomResourceDefinition" => {
            return Some(by_hand(
                "v1 needs a structural schema per version and moves the validation, subresources and printer columns into `versions`",
            ));
        }
        "CertificateSigningRequest" => {
            return Some(by_hand("v1 requires spec.signerName"));
        }
        "FlowSchema" | "PriorityLevelConfiguration" => {
            return Some(by_hand(
                "assuredConcurrencyShares became nominalConcurrencyShares, with other defaults",
            ));
        }
        "EndpointSlice" | "Event" | "ControllerRevision" => {
            return Some(by_hand("its fields were reshaped"));
        }
        _ => {}
    }
    o["apiVersion"] = Value::from(to);
    Some(Conversion::Converted {
        from,
        to: to.to_string(),
        removed_in: gone.removed_in,
        notes,
    })
}

/// A label selector that selects everything (absent, `{}`, or only empty parts).
fn empty_selector(selector: &Value) -> bool {
    selector
        .as_object()
        .is_none_or(|s| s.values().all(|v| v.as_object().is_some_and(Map::is_empty)))
}

/// apps/v1 requires a selector (the old versions defaulted it to the template's labels), drops
/// `templateGeneration` and `rollbackTo`, and changed update defaults, which are written out where the old
/// version's differ.
fn workload(o: &mut Value, from: &str, kind: &str, notes: &mut Vec<String>) {
    let Some(spec) = o["spec"].as_object_mut() else {
        return;
    };
    if !spec.contains_key("selector")
        && let Some(labels) = spec
            .get("template")
            .and_then(|t| t["metadata"]["labels"].as_object())
            .filter(|l| !l.is_empty())
    {
        spec.insert("selector".into(), json!({ "matchLabels": labels }));
        notes.push("its selector is the template's labels (apps/v1 requires one)".into());
    }
    for gone in ["templateGeneration", "rollbackTo"] {
        if spec.shift_remove(gone).is_some() {
            notes.push(format!("`spec.{gone}` was dropped (apps/v1 has none)"));
        }
    }
    let old_on_delete = match kind {
        "DaemonSet" => from == "extensions/v1beta1",
        "StatefulSet" => from == "apps/v1beta1",
        _ => false,
    };
    if old_on_delete && !spec.contains_key("updateStrategy") {
        spec.insert("updateStrategy".into(), json!({ "type": "OnDelete" }));
        notes.push(format!(
            "`updateStrategy: OnDelete` written out ({from}'s default; apps/v1's is RollingUpdate)"
        ));
    }
    if kind == "Deployment" && from != "apps/v1beta2" {
        notes.push(format!(
            "{from}'s defaults for revisionHistoryLimit, progressDeadlineSeconds and the rolling update's maxSurge/maxUnavailable differ from apps/v1's; set them if you relied on them"
        ));
    }
}

/// networking.k8s.io/v1 moved `backend` to `defaultBackend`, a backend's `serviceName`/`servicePort` to
/// `service: {name, port: {number|name}}`, and requires each path's `pathType` (the old default was
/// ImplementationSpecific).
fn ingress(o: &mut Value, notes: &mut Vec<String>) {
    let Some(spec) = o["spec"].as_object_mut() else {
        return;
    };
    if let Some(mut backend) = spec.shift_remove("backend") {
        convert_backend(&mut backend);
        spec.insert("defaultBackend".into(), backend);
        notes.push("`spec.backend` is `spec.defaultBackend`".into());
    }
    let mut typed = 0;
    for rule in spec
        .get_mut("rules")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        // `pointer_mut`, not `rule["http"]["paths"]`: indexing panics on a rule or `http` that is not an
        // object, and adds `http: {paths: null}` to a rule without one.
        let paths = rule
            .pointer_mut("/http/paths")
            .and_then(Value::as_array_mut);
        for path in paths.into_iter().flatten() {
            if let Some(b) = path.get_mut("backend") {
                convert_backend(b);
            }
            if let Some(p) = path.as_object_mut()
                && !p.contains_key("pathType")
            {
                p.insert("pathType".into(), Value::from("ImplementationSpecific"));
                typed += 1;
            }
        }
    }
    if typed > 0 {
        notes.push(format!(
            "{typed} path(s) got `pathType: ImplementationSpecific` (the old default; networking.k8s.io/v1 requires it)"
        ));
    }
}

fn convert_backend(b: &mut Value) {
    let Some(m) = b.as_object_mut() else {
        return;
    };
    let name = m.shift_remove("serviceName");
    let port = m.shift_remove("servicePort");
    if name.is_none() && port.is_none() {
        return;
    }
    let port = match port {
        Some(Value::String(s)) => match s.parse::<i64>() {
            Ok(n) => json!({ "number": n }),
            Err(_) => json!({ "name": s }),
        },
        Some(n @ Value::Number(_)) => json!({ "number": n }),
        _ => json!({}),
    };
    m.insert(
        "service".into(),
        json!({ "name": name.unwrap_or_default(), "port": port }),
    );
}

/// autoscaling/v2 gives each metric a `target: {type, averageUtilization|averageValue|value}` and names
/// custom metrics in `metric: {name, selector}`.
fn autoscaler_v2beta1(o: &mut Value, notes: &mut Vec<String>) {
    let mut changed = 0;
    // `pointer_mut`, not `o["spec"]["metrics"]`: indexing panics on a `spec` that is not an object (found
    // by the manifest_import fuzz target) and adds `metrics: null` to a spec without metrics.
    let metrics = o.pointer_mut("/spec/metrics").and_then(Value::as_array_mut);
    for metric in metrics.into_iter().flatten() {
        let kind = match metric["type"].as_str() {
            Some("Resource") => "resource",
            Some("ContainerResource") => "containerResource",
            Some("Pods") => "pods",
            Some("Object") => "object",
            Some("External") => "external",
            _ => continue,
        };
        let Some(source) = metric.get_mut(kind).and_then(Value::as_object_mut) else {
            continue;
        };
        let mut target = Map::new();
        if let Some(u) = source.shift_remove("targetAverageUtilization") {
            target.insert("type".into(), "Utilization".into());
            target.insert("averageUtilization".into(), u);
        }
        if let Some(v) = source.shift_remove("targetAverageValue") {
            target.entry("type").or_insert("AverageValue".into());
            target.insert("averageValue".into(), v);
        }
        if let Some(v) = source.shift_remove("targetValue") {
            target.insert("type".into(), "Value".into());
            target.insert("value".into(), v);
        }
        if let Some(v) = source.shift_remove("averageValue") {
            target.entry("type").or_insert("AverageValue".into());
            target.insert("averageValue".into(), v);
        }
        if matches!(kind, "pods" | "object" | "external") {
            let mut id = Map::new();
            if let Some(n) = source.shift_remove("metricName") {
                id.insert("name".into(), n);
            }
            let selector = source
                .shift_remove("selector")
                .or_else(|| source.shift_remove("metricSelector"));
            if let Some(s) = selector {
                id.insert("selector".into(), s);
            }
            source.insert("metric".into(), Value::Object(id));
        }
        if kind == "object"
            && let Some(t) = source.shift_remove("target")
        {
            source.insert("describedObject".into(), t);
        }
        source.insert("target".into(), Value::Object(target));
        changed += 1;
    }
    if changed > 0 {
        notes.push(format!(
            "{changed} metric(s) rewritten to autoscaling/v2's `target:` form"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converted(mut o: Value) -> (Value, Conversion) {
        let c = to_served(&mut o).expect("a removed version");
        (o, c)
    }

    #[test]
    fn served_and_custom_versions_are_left_alone() {
        let mut o =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}});
        assert_eq!(to_served(&mut o), None);
        let mut o = json!({"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute"});
        assert_eq!(to_served(&mut o), None);
    }

    #[test]
    fn an_old_daemon_set_gets_a_selector_and_keeps_its_on_delete_updates() {
        let (o, c) = converted(json!({
            "apiVersion": "extensions/v1beta1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"templateGeneration": 3,
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "a:1"}]}}}
        }));
        assert_eq!(o["apiVersion"], "apps/v1");
        assert_eq!(
            o["spec"]["selector"],
            json!({"matchLabels": {"app": "agent"}})
        );
        assert_eq!(o["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
        assert!(o["spec"].get("templateGeneration").is_none());
        let m = c.message();
        assert!(
            m.starts_with(
                "extensions/v1beta1 is not served since Kubernetes 1.16; converted to apps/v1"
            ),
            "{m}"
        );
        assert!(m.contains("templateGeneration"), "{m}");
    }

    #[test]
    fn an_apps_v1beta2_deployment_only_changes_its_version() {
        let input = json!({
            "apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": {"name": "redis"},
            "spec": {"selector": {"matchLabels": {"app": "redis"}},
                     "template": {"metadata": {"labels": {"app": "redis"}}, "spec": {"containers": []}}}
        });
        let (o, c) = converted(input.clone());
        let mut want = input;
        want["apiVersion"] = "apps/v1".into();
        assert_eq!(o, want);
        assert!(matches!(c, Conversion::Converted { ref notes, .. } if notes.is_empty()));
    }

    /// Found by the `manifest_import` fuzz target (fuzz/regressions/manifest_import/hpa_spec_is_a_string):
    /// an autoscaling/v2beta1 HPA whose `spec` is a string panicked; an Ingress rule that is a string too.
    /// Neither conversion adds fields the input lacks.
    #[test]
    fn odd_specs_convert_without_a_panic_or_added_fields() {
        for input in [
            json!({"apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
                   "metadata": {"name": "a"}, "spec": "sDcaleTar}"}),
            json!({"apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
                   "metadata": {"name": "a"}, "spec": {"maxReplicas": 3}}),
            json!({"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"rules": ["x", {"host": "a"}, {"http": "y"}]}}),
        ] {
            let (o, _) = converted(input.clone());
            assert_eq!(o["spec"], input["spec"], "{input}");
        }
        let text = "apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: a\nspec:\n  sDcaleTar}\n";
        let sources = crate::read::parse_text(text, "x.yaml", None).expect("reads");
        let _ = crate::import(sources, &crate::Options::default());
    }

    #[test]
    fn an_old_ingress_gets_v1_backends_and_path_types() {
        let (o, _) = converted(json!({
            "apiVersion": "networking.k8s.io/v1beta1", "kind": "Ingress", "metadata": {"name": "web"},
            "spec": {
                "backend": {"serviceName": "fallback", "servicePort": 80},
                "rules": [{"host": "shop.example.com", "http": {"paths": [
                    {"path": "/", "backend": {"serviceName": "web", "servicePort": "http"}},
                    {"path": "/api", "pathType": "Prefix", "backend": {"serviceName": "api", "servicePort": "8080"}}
                ]}}]
            }
        }));
        assert_eq!(o["apiVersion"], "networking.k8s.io/v1");
        assert_eq!(
            o["spec"]["defaultBackend"],
            json!({"service": {"name": "fallback", "port": {"number": 80}}})
        );
        let paths = &o["spec"]["rules"][0]["http"]["paths"];
        assert_eq!(
            paths[0],
            json!({"path": "/", "backend": {"service": {"name": "web", "port": {"name": "http"}}},
                   "pathType": "ImplementationSpecific"})
        );
        assert_eq!(
            paths[1]["backend"],
            json!({"service": {"name": "api", "port": {"number": 8080}}})
        );
        assert_eq!(paths[1]["pathType"], "Prefix");
    }

    #[test]
    fn v2beta1_metrics_get_v2_targets() {
        let (o, _) = converted(json!({
            "apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4,
                     "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 99}},
                {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "200Mi"}},
                {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
                {"type": "Object", "object": {"metricName": "hits",
                    "target": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "web"},
                    "targetValue": "2k"}},
                {"type": "External", "external": {"metricName": "queue",
                    "metricSelector": {"matchLabels": {"q": "jobs"}}, "targetAverageValue": "30"}}
            ]}
        }));
        assert_eq!(o["apiVersion"], "autoscaling/v2");
        let m = &o["spec"]["metrics"];
        assert_eq!(
            m[0]["resource"],
            json!({"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 99}})
        );
        assert_eq!(
            m[1]["resource"],
            json!({"name": "memory", "target": {"type": "AverageValue", "averageValue": "200Mi"}})
        );
        assert_eq!(
            m[2]["pods"],
            json!({"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}})
        );
        assert_eq!(
            m[3]["object"],
            json!({"metric": {"name": "hits"},
                   "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "web"},
                   "target": {"type": "Value", "value": "2k"}})
        );
        assert_eq!(
            m[4]["external"],
            json!({"metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
                   "target": {"type": "AverageValue", "averageValue": "30"}})
        );
    }

    #[test]
    fn meaning_changing_conversions_and_gone_kinds_are_kept_with_the_reason() {
        let mut o = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
                           "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}});
        let c = to_served(&mut o).expect("removed");
        assert_eq!(o["apiVersion"], "admissionregistration.k8s.io/v1beta1");
        assert!(matches!(&c, Conversion::Kept { reason, .. } if reason.contains("sideEffects")));
        let mut o = json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy",
                           "metadata": {"name": "p"}});
        let c = to_served(&mut o).expect("removed");
        assert_eq!(
            c.message(),
            "policy/v1beta1 is not served since Kubernetes 1.25, and PodSecurityPolicy has no replacement"
        );
    }

    #[test]
    fn an_empty_budget_selector_is_reported() {
        let (o, c) = converted(
            json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
                                      "metadata": {"name": "b"}, "spec": {"minAvailable": 1}}),
        );
        assert_eq!(o["apiVersion"], "policy/v1");
        assert!(c.message().contains("selects every pod"), "{}", c.message());
    }
}
