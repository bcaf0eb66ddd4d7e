//! `http_route`: an HTTPRoute `resource` of the app, its ports resolved from the Services' names, its
//! references checked by the HTTPRoute table, its CRD required.

use crate::tests::{check, errors};
use serde_json::json;

const CRDS: &str = "crds \"../tests/crds/\";";

fn app(items: &str) -> String {
    format!(
        "{CRDS} deployment api {{ image: IMAGE, ports: {{ http: 8080, admin: 9000 }} }} \
         service api -> api {{ ports: {{ http: 80 => http, admin: 9000 => admin }} }} \
         resource Gateway public {{ spec: {{ gatewayClassName: \"edge\", listeners: [{{ name: http, port: 80, protocol: \"HTTP\" }}] }} }} \
         {items}"
    )
}

#[test]
fn an_http_route_becomes_a_resource_with_its_ports_resolved() {
    // Declared before the Service it names: the port is found once every item is read.
    let checked = check(&format!(
        "http_route shop {{ host: \"shop.example.com\", gateway: public, listener: http, labels: {{ tier: \"edge\" }}, \
           paths: {{ \"/\": api:http, \"/admin\": api => admin, \"/v2\": api => 9000, \"/first\": api }} }} {}",
        app("")
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let r = checked
        .app
        .resources
        .iter()
        .find(|r| r.kind == "HTTPRoute")
        .expect("the route");
    assert_eq!(r.api_version, "gateway.networking.k8s.io/v1");
    assert_eq!(r.crd, "httproutes.gateway.networking.k8s.io");
    assert!(r.namespaced);
    assert_eq!(r.labels.len(), 1);
    let rule = |path: &str, port: i64| {
        json!({
            "matches": [{ "path": { "type": "PathPrefix", "value": path } }],
            "backendRefs": [{ "name": "api", "port": port }],
        })
    };
    assert_eq!(
        r.fields.to_json(),
        json!({ "spec": {
            "parentRefs": [{ "name": "public", "sectionName": "http" }],
            "hostnames": ["shop.example.com"],
            "rules": [rule("/", 80), rule("/admin", 9000), rule("/v2", 9000), rule("/first", 80)],
        } })
    );
}

#[test]
fn an_http_routes_mistakes_each_have_their_code() {
    let found = errors(&app(
        "http_route shop { host: \"Shop_Example\", gateway: publc, listener: htp, \
           paths: { \"/\": api => htp, \"/b\": apii => http, \"/c\": api => 81 }, hots: \"x\" }",
    ));
    let joined = found.join("\n---\n");
    assert!(joined.contains("PCL0025: unknown key `hots`"), "{joined}");
    assert!(
        joined.contains("PCL0023: Service `api` has no port named `htp`")
            && joined.contains("did you mean `http`?"),
        "{joined}"
    );
    assert!(
        joined.contains("PCL0022: no Service named `apii`")
            && joined.contains("did you mean `api`?"),
        "{joined}"
    );
    assert!(joined.contains("Service `api` has no port 81"), "{joined}");
    assert!(
        joined.contains("attaches to no Gateway of the app named `publc`"),
        "{joined}"
    );
    assert!(
        joined.contains("PCL0233") && joined.contains("Shop_Example"),
        "{joined}"
    );
    assert_eq!(found.len(), 6, "{joined}");
    // The listener is checked once the Gateway is right.
    let e = errors(&app(
        "http_route shop { gateway: public, listener: htp, paths: { \"/\": api } }",
    ));
    assert!(
        e[0].contains("Gateway `public` has no listener named `htp`")
            && e[0].contains("did you mean `http`?"),
        "{e:?}"
    );
    // Required keys.
    let e = errors(&app("http_route shop { host: \"shop.example.com\" }"));
    let joined = e.join("\n---\n");
    assert!(
        joined.contains("needs `gateway:`") && joined.contains("needs `paths:`"),
        "{joined}"
    );
}

#[test]
fn an_http_route_needs_the_httproute_crd() {
    let e = errors(
        "crds \"../tests/crds/monitoring.coreos.com_servicemonitors.yaml\"; \
         deployment api { image: IMAGE, ports: { http: 8080 } } service api -> api { port: 80 => http } \
         http_route shop { gateway: public, paths: { \"/\": api:http } }",
    );
    assert!(
        e[0].starts_with(
            "PCL0235: http_route shop is a gateway.networking.k8s.io/v1/HTTPRoute, which no CRD of the app defines"
        ),
        "{e:?}"
    );
    assert_eq!(e.len(), 1, "{e:?}");
}
