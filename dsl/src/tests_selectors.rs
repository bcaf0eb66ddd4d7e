//! `(service api)` and `(pods api)` in `resource` blocks: the labels they render, the Service label added
//! when a Service's own cannot tell it apart, unknown names; the PodMonitor's and GRPCRoute's references.

use crate::tests::{check, errors};
use serde_json::json;

const CRDS: &str = "crds \"../tests/crds/\";";

/// Two workloads and two Services (`api` labelled `tier: api`, `web` not), then `items`.
fn app(items: &str) -> String {
    format!(
        "{CRDS} deployment api {{ image: IMAGE, ports: {{ http: 8080, metrics: 9090 }} }} \
         deployment web {{ image: IMAGE, ports: {{ http: 8080 }} }} \
         service api -> api {{ labels: {{ team: \"shop\", tier: \"api\" }}, ports: {{ http: 80 => http, metrics: 9090 => metrics }} }} \
         service web -> web {{ labels: {{ team: \"shop\" }}, port: 80 => http }} {items}"
    )
}

#[test]
fn a_service_selector_renders_the_fewest_labels_that_select_it_alone() {
    // `api`'s own `tier` tells it apart (`team` does not: `web` has it too).
    let checked = check(&app(
        "resource ServiceMonitor api { spec: { selector: (service api), endpoints: [{ port: metrics }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let monitor = checked.app.resources[0].fields.to_json();
    assert_eq!(
        monitor["spec"]["selector"],
        json!({ "matchLabels": { "app.kubernetes.io/name": "demo", "tier": "api" } })
    );
    // `web`'s labels are all `api`'s too: it gets a label of its own, which the selector names.
    let checked = check(&app(
        "resource ServiceMonitor web { spec: { selector: (service web), endpoints: [{ port: http }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let monitor = checked.app.resources[0].fields.to_json();
    assert_eq!(
        monitor["spec"]["selector"]["matchLabels"],
        json!({ "app.kubernetes.io/name": "demo", "piceli.dev/service": "web" })
    );
    let web = &checked.app.services[1];
    assert!(
        web.labels
            .iter()
            .any(|(k, v)| k.v == "piceli.dev/service" && v.v == "web"),
        "{:?}",
        web.labels
    );
    assert!(
        checked.app.services[0].labels.len() == 2,
        "`api` is left alone"
    );
    // The only Service of its app: the app's name label selects it.
    let checked = check(&format!(
        "{CRDS} deployment api {{ image: IMAGE, ports: {{ http: 8080 }} }} service api -> api {{ port: 80 => http }} \
         resource ServiceMonitor api {{ spec: {{ selector: (service api), endpoints: [{{ port: http }}] }} }}"
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(
        checked.app.resources[0].fields.to_json()["spec"]["selector"]["matchLabels"],
        json!({ "app.kubernetes.io/name": "demo" })
    );
    assert_eq!(checked.app.services[0].labels.len(), 0);
}

#[test]
fn a_service_selector_is_checked_like_a_written_one() {
    let found = errors(&app(
        // Declared after: found. Its ports: `metrcs` is not one.
        "resource ServiceMonitor api { spec: { selector: (service api), endpoints: [{ port: metrcs }] } } \
         resource ServiceMonitor db { spec: { selector: (service apii), endpoints: [{ port: http }] } } \
         resource ServiceMonitor other { spec: { selector: (servce api), endpoints: [] } } \
         resource HTTPRoute route { spec: { hostnames: [(service api)] } }",
    ));
    let joined = found.join("\n---\n");
    assert_eq!(found.len(), 4, "{joined}");
    assert!(
        joined.contains("PCL0023") && joined.contains("has a port named `metrcs`"),
        "{joined}"
    );
    assert!(joined.contains("did you mean `metrics`?"), "{joined}");
    assert!(
        joined.contains("PCL0022: no Service named `apii`")
            && joined.contains("did you mean `api`?"),
        "{joined}"
    );
    assert!(
        joined.contains("PCL0025: `servce` is not something a selector names")
            && joined.contains("did you mean `(service api)`?"),
        "{joined}"
    );
    assert!(
        joined.contains("PCL0046") && joined.contains("not a selector `(KIND NAME)`"),
        "{joined}"
    );
    // An external Service's labels are not the app's.
    let e = errors(&format!(
        "{CRDS} external service db; resource ServiceMonitor db {{ spec: {{ selector: (service db), endpoints: [] }} }}"
    ));
    assert!(
        e[0].starts_with("PCL0022: `(service db)` names an external Service"),
        "{}",
        e[0]
    );
}

#[test]
fn a_pod_monitor_selects_the_pods_of_a_workload_and_names_their_ports() {
    let checked = check(&app(
        "resource PodMonitor api { spec: { selector: (pods api), podMetricsEndpoints: [{ port: metrics }, { portNumber: 9090 }] } } \
         resource PodMonitor all { spec: { selector: { matchLabels: { \"app.kubernetes.io/name\": \"demo\" } }, podMetricsEndpoints: [{ port: http }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let monitor = checked.app.resources[0].fields.to_json();
    assert_eq!(
        monitor["spec"]["selector"]["matchLabels"],
        json!({ "app.kubernetes.io/name": "demo", "app.kubernetes.io/component": "api" })
    );
    assert_eq!(
        checked.app.resources[0].api_version,
        "monitoring.coreos.com/v1"
    );

    let errors = errors(&app(
        "resource PodMonitor api { spec: { selector: (pods api), podMetricsEndpoints: [{ port: metrcs }, { portNumber: 9091 }] } } \
         resource PodMonitor web { spec: { selector: (pods wbe), podMetricsEndpoints: [] } } \
         resource PodMonitor db { spec: { selector: { matchLabels: { \"app.kubernetes.io/component\": \"db\" } }, podMetricsEndpoints: [{ port: http }] } } \
         resource PodMonitor both { spec: { selector: { matchLabels: { \"app.kubernetes.io/name\": \"demo\" } }, podMetricsEndpoints: [{ port: metrics }] } }",
    ));
    let joined = errors.join("\n---\n");
    assert_eq!(errors.len(), 4, "{joined}");
    assert!(
        joined.contains("PCL0009: resource monitoring.coreos.com/v1/PodMonitor api: no workload it selects (`api`) exposes a port named `metrcs`")
            && joined.contains("did you mean `metrics`?"),
        "{joined}"
    );
    assert!(joined.contains("exposes port 9091"), "{joined}");
    assert!(
        joined.contains("PCL0008: no workload named `wbe`")
            && joined.contains("did you mean `web`?"),
        "{joined}"
    );
    assert!(
        joined.contains("PCL0239: resource monitoring.coreos.com/v1/PodMonitor db selects no pods of the app's workloads")
            && joined.contains("write `selector: (pods api)`"),
        "{joined}"
    );
    // `both` selects `api` and `web`: `metrics` is `api`'s, so it is found.
    assert!(!joined.contains("PodMonitor both"), "{joined}");
}

#[test]
fn a_grpc_route_shares_the_http_routes_references() {
    check(&app(
        "resource Gateway public { spec: { gatewayClassName: \"edge\", listeners: [{ name: grpc, port: 443, protocol: \"HTTPS\" }] } } \
         resource GRPCRoute api { spec: { parentRefs: [{ name: public, sectionName: grpc }], rules: [{ backendRefs: [{ name: api, port: 9090 }] }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let errors = errors(&app(
        "resource Gateway public { spec: { gatewayClassName: \"edge\", listeners: [{ name: grpc, port: 443, protocol: \"HTTPS\" }] } } \
         resource GRPCRoute api { spec: { parentRefs: [{ name: publc }, { name: public, sectionName: grcp }], rules: [{ backendRefs: [{ name: ap, port: 9090 }, { name: api, port: 9091 }] }] } }",
    ));
    let joined = errors.join("\n---\n");
    assert_eq!(errors.len(), 4, "{joined}");
    assert!(joined.contains("no Service named `ap`"), "{joined}");
    assert!(
        joined.contains("Service `api` has no port 9091"),
        "{joined}"
    );
    assert!(
        joined.contains("GRPCRoute api attaches to no Gateway of the app named `publc`"),
        "{joined}"
    );
    assert!(
        joined.contains("Gateway `public` has no listener named `grcp`"),
        "{joined}"
    );
}
