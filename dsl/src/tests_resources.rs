//! `crds` and `resource` items: the vendored CRDs (`tests/crds/`, relative to this crate) read, kinds
//! found, blocks checked against their schemas, files tracked and schemas kept only for run-time values.

use crate::tests::{check, errors};
use crate::valid::DynamicKind;

const CRDS: &str = "crds \"../tests/crds/\";";

fn app(items: &str) -> String {
    format!(
        "{CRDS} deployment api {{ image: IMAGE, ports: {{ http: 8080 }} }} service api -> api {{ port: 80 => http }} {items}"
    )
}

#[test]
fn a_route_and_a_monitor_check_into_the_model() {
    let checked = check(&app(
        "resource gateway.networking.k8s.io/v1/HTTPRoute web { \
           labels: { tier: \"edge\" }, \
           spec: { parentRefs: [{ name: \"public\", namespace: \"infra\" }], rules: [{ backendRefs: [{ name: \"api\", port: 80 }] }] } } \
         resource ServiceMonitor api { spec: { selector: { matchLabels: { \"app.kubernetes.io/name\": \"demo\" } }, endpoints: [{ port: \"http\" }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let r = &checked.app.resources;
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].api_version, "gateway.networking.k8s.io/v1");
    assert_eq!(r[0].crd, "httproutes.gateway.networking.k8s.io");
    assert_eq!(r[1].kind, "ServiceMonitor");
    assert!(r.iter().all(|r| r.namespaced && r.schema.is_none()));
    assert_eq!(r[0].labels.len(), 1);
    // Every file read is tracked, in name order.
    assert_eq!(checked.tracked.len(), 7, "{:?}", checked.tracked);
    assert_eq!(
        checked.tracked[0],
        "../tests/crds/cert-manager.io_certificates.yaml"
    );
    // Not installed: no include.
    assert!(checked.app.includes.is_empty());
}

#[test]
fn schema_problems_have_the_built_in_codes() {
    let errors = errors(&app(
        "resource gateway.networking.k8s.io/v1/HTTPRoute web { \
           spec: { rules: [{ backendRefs: [{ nmae: \"api\", port: \"80\" }], \
                             matches: [{ path: { type: \"Prefx\", value: \"/\" } }] }] } }",
    ));
    let joined = errors.join("\n---\n");
    assert!(
        joined.contains("PCL0120") || joined.contains("has no field `nmae`"),
        "{joined}"
    );
    assert!(joined.contains("did you mean `name`?"), "{joined}");
    assert!(
        joined.contains("takes an integer, not a string"),
        "{joined}"
    );
    assert!(joined.contains("\"Prefx\" is not a value of"), "{joined}");
}

#[test]
fn kinds_unknown_ambiguous_and_scoped() {
    let e = errors(&app(
        "resource gateway.networking.k8s.io/v1/HTTPRoutes web { spec: {} }",
    ));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("PCL0235"), "{}", e[0]);
    assert!(
        e[0].contains("did you mean `gateway.networking.k8s.io/v1/HTTPRoute`?"),
        "{}",
        e[0]
    );
    // Two CRDs of one kind (a second Certificate, in another group): the kind alone is ambiguous.
    let e = errors(&app(
        "crds \"../tests/ui/fixtures/other-certificate-crd.yaml\"; resource Certificate tls { spec: {} }",
    ));
    assert!(e[0].starts_with("PCL0236"), "{}", e[0]);
    assert!(
        e[0].contains("cert-manager.io/v1/Certificate, certs.example.com/v1/Certificate"),
        "{}",
        e[0]
    );
    let e = errors(&app(
        "resource GatewayClass public { namespace: \"edge\", spec: { controllerName: \"example.com/gateway\" } }",
    ));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("PCL0237"), "{}", e[0]);
    // Without `crds`, the help says to read them.
    let e = errors("resource ServiceMonitor api { spec: {} }");
    assert!(e[0].contains("read the CRD first"), "{}", e[0]);
}

#[test]
fn top_level_keys_and_fields_set_by_piceli() {
    let e = errors(&app(
        "resource cert-manager.io/v1/Certificate tls { spc: {}, metadata: {}, status: {} }",
    ));
    let joined = e.join("\n---\n");
    assert!(joined.contains("unknown key `spc`"), "{joined}");
    assert!(joined.contains("did you mean `spec`?"), "{joined}");
    assert!(
        joined
            .contains("`metadata` in resource cert-manager.io/v1/Certificate tls is set by Piceli"),
        "{joined}"
    );
    assert!(joined.contains("`status` in"), "{joined}");
    assert_eq!(e.len(), 3, "{joined}");
    // `secretName` and `issuerRef` are required by the Certificate's spec.
    let e = errors(&app(
        "resource cert-manager.io/v1/Certificate tls { spec: { dnsNames: [\"a.example\"] } }",
    ));
    assert!(e[0].contains("lacks `issuerRef`, `secretName`"), "{}", e[0]);
}

#[test]
fn a_rust_expression_keeps_the_schema_for_run_time() {
    let checked = check(&app(
        "resource gateway.networking.k8s.io/v1/HTTPRoute web { spec: { hostnames: (hosts()), rules: [{ backendRefs: [{ name: \"api\", port: (port()) }] }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let r = &checked.app.resources[0];
    assert!(r.schema.is_some());
    let kinds: Vec<&str> = checked
        .dynamics
        .iter()
        .map(|d| match d.kind {
            DynamicKind::Json(_) => "json",
            DynamicKind::Int(_) => "int",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["json", "int"]);
    // Small: no descriptions in the embedded schema (the CRD file is 343 kB).
    let json = serde_json::to_string(&r.schema).expect("json");
    assert!(json.len() < 20_000, "{}", json.len()); // 13,228 bytes for HTTPRoute v1
}

#[test]
fn install_renders_the_crd_files_as_includes() {
    let checked = check(
        "crds \"../tests/crds/monitoring.coreos.com_servicemonitors.yaml\" { install: true } \
         resource ServiceMonitor api { spec: { selector: {}, endpoints: [] } }",
    )
    .unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(checked.app.includes.len(), 1);
    assert!(
        checked.dynamics.iter().any(
            |d| matches!(&d.kind, DynamicKind::File(p) if p.ends_with("servicemonitors.yaml"))
        )
    );
    let e = errors("crds \"../tests/nothing-here/\";");
    assert!(e[0].starts_with("PCL0234"), "{}", e[0]);
}

#[test]
fn bare_names_are_strings_and_references_are_checked() {
    // The syntax: `name: api`, `port: http` name the app's items without quotes.
    let checked = check(&app(
        "resource Gateway public { spec: { gatewayClassName: \"edge\", listeners: [{ name: http, port: 80, protocol: \"HTTP\" }] } } \
         resource HTTPRoute web { spec: { parentRefs: [{ name: public }], rules: [{ backendRefs: [{ name: api, port: 80 }] }] } } \
         resource ServiceMonitor api { spec: { selector: { matchLabels: { \"app.kubernetes.io/name\": \"demo\" } }, endpoints: [{ port: http }] } }",
    ))
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let route = checked.app.resources[1].fields.to_json();
    assert_eq!(route["spec"]["rules"][0]["backendRefs"][0]["name"], "api");
    assert_eq!(route["spec"]["parentRefs"][0]["name"], "public");

    // Each reference, wrong, in one build: every error, its code and its help.
    let errors = errors(&app(
        "resource HTTPRoute web { spec: { parentRefs: [{ name: publc }], rules: [{ backendRefs: [{ name: apii, port: 80 }, { name: api, port: 81 }] }] } } \
         resource ServiceMonitor api { spec: { selector: { matchLabels: { \"app.kubernetes.io/name\": \"demo\" } }, endpoints: [{ port: htp }] } } \
         resource Certificate tls { spec: { secretName: tls, issuerRef: { name: ca } } }",
    ));
    let joined = errors.join("\n---\n");
    assert_eq!(errors.len(), 5, "{joined}");
    assert!(joined.contains("no Service named `apii`"), "{joined}");
    assert!(joined.contains("Service `api` has no port 81"), "{joined}");
    assert!(
        joined.contains("attaches to no Gateway of the app named `publc`"),
        "{joined}"
    );
    assert!(joined.contains("has a port named `htp`"), "{joined}");
    assert!(joined.contains("did you mean `http`?"), "{joined}");
    assert!(
        joined.contains("names no Issuer of the app called `ca`"),
        "{joined}"
    );
}

#[test]
fn a_bare_name_where_the_schema_takes_a_number_is_refused() {
    let errors = errors(&app(
        "resource HTTPRoute web { spec: { rules: [{ backendRefs: [{ name: api, port: http }] }] } }",
    ));
    assert!(errors.join("\n").contains("not a name"), "{errors:#?}");
}
