//! The table of immutable fields and its comparison: what a server-side apply would change, never what the
//! server defaulted or another manager added.

use super::*;
use crate::engine::replace::{Decision, Propagation, decide, reason};
use serde_json::json;

const MANAGER: &str = "piceli";

/// A live object as the server keeps it after `manager` applied `fields` (fieldsV1), with `extra` merged
/// into `desired` (what the server defaulted).
fn live_of(desired: &Value, fields: Value, extra: Value) -> Value {
    let mut live = desired.clone();
    merge(&mut live, &extra);
    live["metadata"]["uid"] = json!("u1");
    live["metadata"]["resourceVersion"] = json!("7");
    live["metadata"]["managedFields"] = json!([
        {"manager": MANAGER, "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": fields}
    ]);
    live
}

fn merge(into: &mut Value, extra: &Value) {
    match (into, extra) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

fn statefulset(claim_size: &str, service: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {
            "serviceName": service,
            "replicas": 1,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "db", "image": "pg:1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": claim_size}}}}]
        }
    })
}

fn statefulset_fields() -> Value {
    json!({"f:spec": {
        "f:serviceName": {}, "f:replicas": {}, "f:selector": {}, "f:volumeClaimTemplates": {},
        "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                       "f:spec": {"f:containers": {"k:{\"name\":\"db\"}": {".": {}, "f:name": {}, "f:image": {}}}}}
    }})
}

/// What the server adds to a StatefulSet: defaults inside the (atomic) claim templates among them.
fn statefulset_defaults() -> Value {
    json!({"spec": {
        "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}}]
    }})
}

#[test]
fn every_rule_names_its_source_and_a_pointer() {
    for r in RULES {
        assert!(r.path.starts_with('/'), "{r:?}");
        assert!(
            r.source.contains("validation") || r.source.contains("strategy.go"),
            "{r:?}"
        );
        for e in r.except {
            assert!(e.starts_with(r.path), "{r:?}");
        }
    }
    for (kind, field) in [
        ("Deployment", "/spec/selector"),
        ("ReplicaSet", "/spec/selector"),
        ("DaemonSet", "/spec/selector"),
        ("StatefulSet", "/spec/selector"),
        ("StatefulSet", "/spec/volumeClaimTemplates"),
        ("StatefulSet", "/spec/serviceName"),
        ("StatefulSet", "/spec/podManagementPolicy"),
        ("Job", "/spec/template"),
        ("Service", "/spec/clusterIP"),
        ("Service", "/spec/ipFamilies"),
        ("PersistentVolumeClaim", "/spec"),
        ("ConfigMap", "/data"),
        ("Secret", "/data"),
        ("CustomResourceDefinition", "/spec/scope"),
    ] {
        assert!(
            RULES.iter().any(|r| r.kind == kind && r.path == field),
            "{kind} {field}"
        );
    }
}

#[test]
fn server_defaults_in_an_atomic_field_are_no_change() {
    let d = statefulset("1Gi", "db");
    let live = live_of(&d, statefulset_fields(), statefulset_defaults());
    assert_eq!(decide(&d, &live, MANAGER), Decision::InPlace);
    // `1024Mi` is the same quantity as the live `1Gi`.
    let same = statefulset("1024Mi", "db");
    assert_eq!(decide(&same, &live, MANAGER), Decision::InPlace);
    // A mutable field only (replicas, the template): in place.
    let mut scaled = d.clone();
    scaled["spec"]["replicas"] = json!(3);
    scaled["spec"]["template"]["spec"]["containers"][0]["image"] = json!("pg:2");
    assert_eq!(decide(&scaled, &live, MANAGER), Decision::InPlace);
}

#[test]
fn a_statefulset_claim_template_change_is_an_orphan_replace() {
    let live = live_of(
        &statefulset("1Gi", "db"),
        statefulset_fields(),
        statefulset_defaults(),
    );
    let Decision::Replace {
        fields,
        propagation,
        ..
    } = decide(&statefulset("2Gi", "db-headless"), &live, MANAGER)
    else {
        panic!("a replace expected");
    };
    assert_eq!(fields, ["spec.volumeClaimTemplates", "spec.serviceName"]);
    assert_eq!(propagation, Propagation::Orphan);
    let why = reason("StatefulSet", &fields[..1], propagation);
    assert!(
        why.starts_with("StatefulSet spec.volumeClaimTemplates is immutable: "),
        "{why}"
    );
    assert!(why.contains("propagation Orphan"), "{why}");
    assert!(why.contains("PersistentVolumeClaims stay"), "{why}");
    assert!(why.contains("To keep the live value instead"), "{why}");
}

fn deployment(selector: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": selector}},
                 "template": {"metadata": {"labels": {"app": selector}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}
    })
}

fn deployment_fields() -> Value {
    json!({"f:spec": {
        "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}}}}}
    }})
}

#[test]
fn a_deployment_selector_change_is_a_background_replace() {
    let live = live_of(
        &deployment("web"),
        deployment_fields(),
        json!({"spec": {"replicas": 1, "selector": {"matchExpressions": null}}}),
    );
    assert_eq!(
        decide(&deployment("web"), &live, MANAGER),
        Decision::InPlace
    );
    match decide(&deployment("web2"), &live, MANAGER) {
        Decision::Replace {
            fields,
            propagation,
            diff,
        } => {
            assert_eq!(fields, ["spec.selector"]);
            assert_eq!(propagation, Propagation::Background);
            assert!(
                diff.iter()
                    .any(|c| c.path == "spec.selector.matchLabels.app"),
                "{diff:?}"
            );
            let why = reason("Deployment", &fields, propagation);
            assert!(why.contains("`spec: { selector: … }`"), "{why}");
        }
        other => panic!("a replace expected: {other:?}"),
    }
    // Not the app's fields: nothing known, the dry run decides.
    assert_eq!(
        decide(&deployment("web2"), &live, "someone-else"),
        Decision::InPlace
    );
}

fn configmap(immutable: bool, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"},
           "immutable": immutable, "data": {"mode": value}})
}

#[test]
fn configmap_data_is_immutable_only_when_marked() {
    let fields = json!({"f:immutable": {}, "f:data": {".": {}, "f:mode": {}}});
    let marked = live_of(&configmap(true, "a"), fields.clone(), json!({}));
    assert!(matches!(
        decide(&configmap(true, "b"), &marked, MANAGER),
        Decision::Replace { ref fields, .. } if fields == &["data".to_string()]
    ));
    assert_eq!(
        decide(&configmap(true, "a"), &marked, MANAGER),
        Decision::InPlace
    );
    // Unmarking it is a change of `immutable` itself.
    assert!(matches!(
        decide(&configmap(false, "a"), &marked, MANAGER),
        Decision::Replace { ref fields, .. } if fields == &["immutable".to_string()]
    ));
    let unmarked = live_of(&configmap(false, "a"), fields, json!({}));
    assert_eq!(
        decide(&configmap(false, "b"), &unmarked, MANAGER),
        Decision::InPlace
    );
}

#[test]
fn a_secret_string_data_is_compared_as_the_data_it_becomes() {
    let desired = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                         "immutable": true, "stringData": {"k": "v"}});
    let live = live_of(
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                "immutable": true, "data": {"k": "dg=="}}),
        json!({"f:immutable": {}, "f:stringData": {".": {}, "f:k": {}}}),
        json!({"type": "Opaque"}),
    );
    assert!(changed(&desired, &live, &json!({})).is_empty());
    let mut other = desired.clone();
    other["stringData"]["k"] = json!("w");
    assert_eq!(changed(&other, &live, &json!({}))[0].field, "data");
}

fn claim(size: &str, class: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "shop"},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                    "resources": {"requests": {"storage": size}}}})
}

#[test]
fn a_claim_grows_in_place_and_any_other_change_is_refused() {
    let fields = json!({"f:spec": {"f:accessModes": {}, "f:storageClassName": {},
        "f:resources": {"f:requests": {".": {}, "f:storage": {}}}}});
    let live = live_of(
        &claim("1Gi", "fast"),
        fields,
        json!({"spec": {"volumeMode": "Filesystem", "volumeName": "pv-1"}, "status": {"phase": "Bound"}}),
    );
    assert_eq!(
        decide(&claim("1Gi", "fast"), &live, MANAGER),
        Decision::InPlace
    );
    assert_eq!(
        decide(&claim("2Gi", "fast"), &live, MANAGER),
        Decision::InPlace
    );
    assert_eq!(
        decide(&claim("512Mi", "fast"), &live, MANAGER),
        Decision::Refused {
            fields: vec!["spec.resources.requests.storage".into()]
        }
    );
    assert_eq!(
        decide(&claim("1Gi", "slow"), &live, MANAGER),
        Decision::Refused {
            fields: vec!["spec".into()]
        }
    );
}

#[test]
fn a_service_keeps_its_cluster_ip_unless_another_is_set() {
    let svc = |ip: Option<&str>| {
        let mut s = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                           "spec": {"ports": [{"name": "http", "port": 80}]}});
        if let Some(ip) = ip {
            s["spec"]["clusterIP"] = json!(ip);
        }
        s
    };
    let live = live_of(
        &svc(None),
        json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}}}}}),
        json!({"spec": {"clusterIP": "10.0.0.7", "clusterIPs": ["10.0.0.7"], "ipFamilies": ["IPv4"], "type": "ClusterIP"}}),
    );
    assert!(changed(&svc(None), &live, &json!({})).is_empty());
    assert!(changed(&svc(Some("10.0.0.7")), &live, &json!({})).is_empty());
    let found: Vec<String> = changed(&svc(Some("10.0.0.9")), &live, &json!({}))
        .into_iter()
        .map(|f| f.field)
        .collect();
    assert_eq!(found, ["spec.clusterIP"]);
    let mut v6 = svc(None);
    v6["spec"]["ipFamilies"] = json!(["IPv6"]);
    assert_eq!(changed(&v6, &live, &json!({}))[0].field, "spec.ipFamilies");
    let mut dual = svc(None);
    dual["spec"]["ipFamilies"] = json!(["IPv4", "IPv6"]);
    assert!(
        changed(&dual, &live, &json!({})).is_empty(),
        "a secondary family may be added"
    );
}

#[test]
fn the_kinds_that_hold_data_are_refused_never_replaced() {
    for kind in [
        "PersistentVolumeClaim",
        "Namespace",
        "CustomResourceDefinition",
    ] {
        let o = json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}});
        assert_eq!(
            crate::engine::replace::decide_for(&o, &o, vec!["spec".into()], None),
            Decision::Refused {
                fields: vec!["spec".into()]
            }
        );
        assert!(!data_lost(kind).is_empty());
    }
}

#[test]
fn a_removed_named_element_or_field_the_app_set_is_a_change() {
    let d = statefulset("1Gi", "db");
    let mut live = live_of(&d, statefulset_fields(), statefulset_defaults());
    // Another manager's second claim template is not the app's change …
    live["spec"]["volumeClaimTemplates"]
        .as_array_mut()
        .expect("templates")
        .push(json!({"metadata": {"name": "logs"}, "spec": {}}));
    let applied = json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
    assert!(!changes(
        d.pointer("/spec/volumeClaimTemplates"),
        live.pointer("/spec/volumeClaimTemplates"),
        applied.pointer("/spec/volumeClaimTemplates")
    ));
    // … but dropping a field the app applied is.
    let mut dropped = d.clone();
    dropped["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("serviceName");
    let found = changed(&dropped, &live, &json!({"spec": {"serviceName": "db"}}));
    assert_eq!(found[0].field, "spec.serviceName");
}

#[test]
fn server_refusals_name_their_immutable_fields() {
    let cases = [
        (
            "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
            vec!["spec.selector"],
        ),
        (
            "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            vec!["spec"],
        ),
        (
            "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.9\"}: may not change once set",
            vec!["spec.clusterIPs"],
        ),
        (
            "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
            vec!["data"],
        ),
        (
            "Job.batch \"m\" is invalid: [spec.selector: Invalid value: \"x\": field is immutable, spec.template: Invalid value: core.PodTemplateSpec{}: field is immutable]",
            vec!["spec.selector", "spec.template"],
        ),
    ];
    for (message, fields) in cases {
        assert_eq!(
            from_server_message(message),
            Some(fields.into_iter().map(String::from).collect()),
            "{message}"
        );
    }
    assert_eq!(
        from_server_message("ConfigMap \"x\" is invalid: data: Invalid value: \"\": bad"),
        None
    );
}
