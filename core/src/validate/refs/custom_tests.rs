//! Unit tests of the references inside custom resources.

use crate::codes::Code;
use crate::model::*;
use crate::spanned::{Loc, Spanned};
use crate::validate::validate;
use serde_json::json;

fn s(v: &str, at: u32) -> Spanned<String> {
    Spanned::new(v.to_string(), Loc(at))
}

const IMAGE: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

/// A workload `api` exposing `http` (8080), a Service `api` with port `http` 80.
fn app() -> App {
    App {
        name: s("shop", 0),
        workloads: vec![Workload {
            name: s("api", 1),
            containers: vec![Container {
                name: s("api", 3),
                image: s(IMAGE, 4),
                ports: vec![ContainerPort {
                    name: s("http", 5),
                    number: Spanned::new(8080, Loc(6)),
                    protocol: None,
                }],
                ..Container::default()
            }],
            ..Workload::default()
        }],
        services: vec![Service {
            name: s("api", 7),
            selects: s("api", 8),
            ports: vec![ServicePort {
                name: s("http", 9),
                port: Spanned::new(80, Loc(10)),
                target: Some(PortRef::Name(s("http", 11))),
                node_port: None,
            }],
            ..Service::default()
        }],
        ..App::default()
    }
}

/// A custom object whose every part is at `at`.
fn object(
    api_version: &str,
    kind: &str,
    name: &str,
    at: u32,
    fields: serde_json::Value,
) -> CustomObject {
    let Some(BlockValue::Map(fields)) = BlockValue::from_json(&fields, Loc(at)) else {
        panic!("the fields are a map");
    };
    CustomObject {
        name: s(name, at),
        api_version: api_version.into(),
        kind: kind.into(),
        crd: format!("{}s.example", kind.to_lowercase()),
        namespaced: true,
        labels: Vec::new(),
        annotations: Vec::new(),
        fields,
        schema: None,
        shortcut: None,
    }
}

fn route(kind: &str, spec: serde_json::Value) -> CustomObject {
    object(
        "gateway.networking.k8s.io/v1",
        kind,
        "web",
        100,
        json!({ "spec": spec }),
    )
}

fn codes(app: &App) -> Vec<(Code, u32)> {
    validate(app)
        .into_iter()
        .map(|d| (d.code, d.at.0))
        .collect()
}

#[test]
fn a_route_to_a_service_port_of_the_app_passes() {
    let mut a = app();
    a.resources.push(object(
        "gateway.networking.k8s.io/v1",
        "Gateway",
        "public",
        90,
        json!({ "spec": { "gatewayClassName": "x" } }),
    ));
    a.resources.push(route(
        "HTTPRoute",
        json!({ "parentRefs": [{ "name": "public" }, { "name": "shared", "namespace": "infra" }],
                "rules": [{ "backendRefs": [{ "name": "api", "port": 80 }] }] }),
    ));
    assert_eq!(codes(&a), vec![]);
}

#[test]
fn backend_refs_name_a_service_and_one_of_its_ports() {
    for kind in ["HTTPRoute", "GRPCRoute"] {
        let mut a = app();
        a.resources.push(route(
            kind,
            json!({ "rules": [{ "backendRefs": [
                { "name": "apii", "port": 80 },
                { "name": "api", "port": 81 },
                { "name": "api" },
                // Another namespace's Service, or another kind of backend: someone else's.
                { "name": "other", "port": 1, "namespace": "elsewhere" },
                { "name": "bucket", "kind": "Bucket", "group": "storage.example" },
            ] }] }),
        ));
        assert_eq!(
            codes(&a),
            vec![
                (Code::UnknownService, 100),
                (Code::UnknownServicePort, 100),
                (Code::UnknownServicePort, 100),
            ],
            "{kind}"
        );
    }
}

#[test]
fn a_backend_that_is_an_external_service_passes() {
    let mut a = app();
    a.externals.push(External {
        kind: ExternalKind::Service,
        name: s("billing", 50),
    });
    a.resources.push(route(
        "HTTPRoute",
        json!({ "rules": [{ "backendRefs": [{ "name": "billing", "port": 8443 }] }] }),
    ));
    assert_eq!(codes(&a), vec![]);
}

#[test]
fn a_section_name_is_a_listener_of_the_gateway() {
    let mut a = app();
    a.resources.push(object(
        "gateway.networking.k8s.io/v1",
        "Gateway",
        "public",
        90,
        json!({ "spec": { "gatewayClassName": "x", "listeners": [{ "name": "https", "port": 443, "protocol": "HTTPS" }] } }),
    ));
    a.resources.push(route(
        "HTTPRoute",
        json!({ "parentRefs": [{ "name": "public", "sectionName": "https" }] }),
    ));
    assert_eq!(codes(&a), vec![]);
    a.resources[1] = route(
        "HTTPRoute",
        json!({ "parentRefs": [{ "name": "public", "sectionName": "htps" }] }),
    );
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, Code::UnknownCustomRef);
    assert_eq!(diags[0].help, "did you mean `https`?");
}

#[test]
fn parent_refs_in_the_namespace_name_a_gateway_of_the_app() {
    let mut a = app();
    a.resources.push(route(
        "HTTPRoute",
        json!({ "parentRefs": [{ "name": "public" }] }),
    ));
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, Code::UnknownCustomRef);
    assert!(diags[0].help.contains("namespace"), "{}", diags[0].help);
}

#[test]
fn parent_refs_may_name_an_external_gateway_whose_listeners_are_not_checked() {
    let mut a = app();
    a.externals.push(External {
        kind: ExternalKind::Gateway,
        name: s("shared", 50),
    });
    a.resources.push(route(
        "HTTPRoute",
        json!({ "parentRefs": [{ "name": "shared", "sectionName": "anything" }] }),
    ));
    assert_eq!(codes(&a), vec![]);
    a.resources[0] = route("HTTPRoute", json!({ "parentRefs": [{ "name": "sharde" }] }));
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, Code::UnknownCustomRef);
    assert_eq!(diags[0].help, "did you mean `shared`?");
    // Not a gateway: an `external service` of that name does not make a Gateway known.
    a.externals[0].kind = ExternalKind::Service;
    a.resources[0] = route("HTTPRoute", json!({ "parentRefs": [{ "name": "shared" }] }));
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].help.contains("`external gateway shared;`"),
        "{}",
        diags[0].help
    );
}

#[test]
fn an_external_gateway_the_app_also_declares_is_a_conflict() {
    let mut a = app();
    a.externals.push(External {
        kind: ExternalKind::Gateway,
        name: s("public", 50),
    });
    a.resources.push(object(
        "gateway.networking.k8s.io/v1",
        "Gateway",
        "public",
        90,
        json!({ "spec": { "gatewayClassName": "x", "listeners": [] } }),
    ));
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, Code::ExternalConflict);
    assert!(
        diags[0]
            .help
            .contains("the app's `resource Gateway public { … }`"),
        "{}",
        diags[0].help
    );
}

#[test]
fn a_certificate_makes_its_secret_known_and_names_an_issuer() {
    let mut a = app();
    a.workloads[0].volumes.push(Volume {
        name: s("tls", 20),
        source: VolumeSource::Secret(s("shop-tls", 21)),
    });
    a.resources.push(object(
        "cert-manager.io/v1",
        "Certificate",
        "shop-tls",
        100,
        json!({ "spec": { "secretName": "shop-tls", "issuerRef": { "name": "letsencrypt", "kind": "ClusterIssuer" } } }),
    ));
    assert_eq!(codes(&a), vec![]);
    // An Issuer (the default kind) must be the app's; a kind cert-manager does not have is refused.
    a.resources.push(object(
        "cert-manager.io/v1",
        "Certificate",
        "other",
        110,
        json!({ "spec": { "secretName": "other", "issuerRef": { "name": "ca" } } }),
    ));
    a.resources.push(object(
        "cert-manager.io/v1",
        "Certificate",
        "third",
        120,
        json!({ "spec": { "secretName": "third", "issuerRef": { "name": "ca", "kind": "ClusterIsuer" } } }),
    ));
    assert_eq!(
        codes(&a),
        vec![(Code::UnknownCustomRef, 110), (Code::InvalidValue, 120)]
    );
    a.resources.push(object(
        "cert-manager.io/v1",
        "Issuer",
        "ca",
        130,
        json!({ "spec": { "selfSigned": {} } }),
    ));
    assert_eq!(codes(&a), vec![(Code::InvalidValue, 120)]);
}

#[test]
fn a_mounted_secret_no_certificate_makes_is_still_unknown() {
    let mut a = app();
    a.workloads[0].volumes.push(Volume {
        name: s("tls", 20),
        source: VolumeSource::Secret(s("shop-tsl", 21)),
    });
    a.resources.push(object(
        "cert-manager.io/v1",
        "Certificate",
        "shop-tls",
        100,
        json!({ "spec": { "secretName": "shop-tls", "issuerRef": { "name": "le", "kind": "ClusterIssuer" } } }),
    ));
    let diags = validate(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, Code::UnknownConfigRef);
    assert_eq!(diags[0].help, "did you mean `shop-tls`?");
}

fn monitor(selector: serde_json::Value, port: &str) -> CustomObject {
    object(
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "api",
        100,
        json!({ "spec": { "selector": selector, "endpoints": [{ "port": port }] } }),
    )
}

#[test]
fn a_service_monitor_selects_services_of_the_app_and_their_named_ports() {
    let mut a = app();
    a.resources.push(monitor(
        json!({ "matchLabels": { "app.kubernetes.io/name": "shop" } }),
        "http",
    ));
    assert_eq!(codes(&a), vec![]);

    let mut a = app();
    a.resources.push(monitor(
        json!({ "matchLabels": { "app.kubernetes.io/name": "shop" } }),
        "metrics",
    ));
    assert_eq!(codes(&a), vec![(Code::UnknownServicePort, 100)]);

    let mut a = app();
    a.resources
        .push(monitor(json!({ "matchLabels": { "tier": "db" } }), "http"));
    assert_eq!(codes(&a), vec![(Code::UnknownCustomRef, 100)]);

    // A Service's own labels select it.
    a.services[0].labels.push((s("tier", 30), s("db", 31)));
    assert_eq!(codes(&a), vec![]);

    // Looking in other namespaces: not the app's to check.
    let mut a = app();
    a.resources.push(object(
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "api",
        100,
        json!({ "spec": { "selector": { "matchLabels": { "x": "y" } }, "namespaceSelector": { "any": true }, "endpoints": [{ "port": "x" }] } }),
    ));
    assert_eq!(codes(&a), vec![]);
}

#[test]
fn the_table_walks_lists() {
    let o = route(
        "HTTPRoute",
        json!({ "rules": [{ "backendRefs": [{ "name": "a" }, { "name": "b" }] }, { "backendRefs": [{ "name": "c" }] }] }),
    );
    assert_eq!(super::at_path(&o, "spec.rules[].backendRefs[]").len(), 3);
    assert_eq!(super::at_path(&o, "spec.parentRefs[]").len(), 0);
}

#[test]
fn a_service_monitor_finds_ports_written_in_the_service_spec() {
    let mut a = App {
        name: s("shop", 0),
        services: vec![Service {
            name: s("api", 7),
            spec: match BlockValue::from_json(
                &json!({ "selector": { "app": "api" }, "ports": [{ "name": "web", "port": 80 }] }),
                Loc(8),
            ) {
                Some(BlockValue::Map(m)) => m,
                _ => panic!("a map"),
            },
            ..Service::default()
        }],
        ..App::default()
    };
    a.resources.push(monitor(
        json!({ "matchLabels": { "app.kubernetes.io/name": "shop" } }),
        "web",
    ));
    assert_eq!(codes(&a), vec![]);
    a.resources[0] = monitor(
        json!({ "matchLabels": { "app.kubernetes.io/name": "shop" } }),
        "wbe",
    );
    assert_eq!(codes(&a), vec![(Code::UnknownServicePort, 100)]);
}

fn pod_monitor(spec: serde_json::Value) -> CustomObject {
    object(
        "monitoring.coreos.com/v1",
        "PodMonitor",
        "api",
        100,
        json!({ "spec": spec }),
    )
}

#[test]
fn a_pod_monitor_selects_pods_of_the_app_and_their_container_ports() {
    let by_component = json!({ "matchLabels": { "app.kubernetes.io/component": "api" } });
    let mut a = app();
    a.resources.push(pod_monitor(json!({
        "selector": by_component,
        "podMetricsEndpoints": [{ "port": "http" }, { "portNumber": 8080 }],
    })));
    assert_eq!(codes(&a), vec![]);

    let mut a = app();
    a.resources.push(pod_monitor(json!({
        "selector": by_component,
        "podMetricsEndpoints": [{ "port": "metrics" }, { "portNumber": 9090 }],
    })));
    assert_eq!(
        codes(&a),
        vec![
            (Code::UnknownTargetPort, 100),
            (Code::UnknownTargetPort, 100)
        ]
    );

    // The pods carry `pod_labels:`, not the workload's own `labels:`.
    let mut a = app();
    a.workloads[0].labels.push((s("tier", 30), s("web", 31)));
    let by_tier =
        json!({ "selector": { "matchLabels": { "tier": "web" } }, "podMetricsEndpoints": [] });
    a.resources.push(pod_monitor(by_tier));
    assert_eq!(codes(&a), vec![(Code::UnknownCustomRef, 100)]);
    a.workloads[0]
        .pod_labels
        .push((s("tier", 32), s("web", 33)));
    assert_eq!(codes(&a), vec![]);

    // Other namespaces, or pods an included file may label so: not the app's to check.
    let mut a = app();
    a.resources.push(pod_monitor(json!({
        "selector": { "matchLabels": { "x": "y" } }, "namespaceSelector": { "any": true },
    })));
    assert_eq!(codes(&a), vec![]);
    assert_eq!(
        crate::validate::pod_selector(&a, "api"),
        [
            ("app.kubernetes.io/component".to_string(), "api".to_string()),
            ("app.kubernetes.io/name".to_string(), "shop".to_string()),
        ]
        .into()
    );
}
