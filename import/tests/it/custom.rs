//! Custom resources of the `--crds` kinds: `resource` items over the vendored Gateway API and Prometheus
//! Operator CRDs (the workspace's tests/crds/), the module's `crds "…";`, and what stays included.

use piceli_import::read::{parse_text, read_inputs};
use piceli_import::{Imported, Options, crds, import};
use std::path::{Path, PathBuf};

fn vendored() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/crds")
}

fn options(crds_path: Option<&str>) -> Options {
    Options {
        app: Some("shop".into()),
        include_path: "k8s/imported.json".into(),
        crds: crds::read(&[vendored()]).expect("the vendored CRDs read"),
        crds_path: crds_path.map(String::from),
        ..Options::default()
    }
}

fn corpus() -> Imported {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/crds");
    let sources = read_inputs(&[set.display().to_string()], &mut std::io::empty()).expect("reads");
    import(sources, &options(Some("crds/")))
}

#[test]
fn routes_and_monitors_of_given_crds_become_resource_items() {
    let i = corpus();
    let s = &i.source;
    assert!(s.contains("    crds \"crds/\";\n"), "{s}");
    assert!(
        s.contains("resource gateway.networking.k8s.io/v1/Gateway public {"),
        "{s}"
    );
    assert!(
        s.contains("resource gateway.networking.k8s.io/v1/HTTPRoute web {"),
        "{s}"
    );
    assert!(
        s.contains("resource monitoring.coreos.com/v1/ServiceMonitor api {"),
        "{s}"
    );
    assert!(s.contains("labels: { tier: \"edge\" },"), "{s}");
    assert!(
        s.contains("annotations: { \"example.com/owner\": \"team-a\" },"),
        "{s}"
    );
    assert!(s.contains("hostnames: [\"shop.example.com\"],"), "{s}");
    // The route's Service the input lacks is someone else's, declared before the route.
    let external = s
        .find("external service billing;")
        .expect("billing is external");
    let route = s.find("HTTPRoute web {").expect("the route");
    assert!(external < route, "{s}");
    // The files of the kinds used: the Certificate's, the Gateway's, the HTTPRoute's, the monitors'.
    let used: Vec<String> = i
        .crd_files
        .iter()
        .map(|&f| {
            options(None).crds[f]
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        used,
        [
            "cert-manager.io_certificates.yaml",
            "gateway.networking.k8s.io_gateways.yaml",
            "gateway.networking.k8s.io_httproutes.yaml",
            "monitoring.coreos.com_podmonitors.yaml",
            "monitoring.coreos.com_servicemonitors.yaml"
        ]
    );
}

#[test]
fn what_would_not_compile_as_a_resource_stays_included_with_why() {
    let i = corpus();
    let includes = i.includes.as_deref().unwrap_or_default();
    assert!(includes.contains("\"Widget\""), "{includes}");
    assert!(!includes.contains("\"HTTPRoute\",\n      \"metadata\": {\n        \"name\": \"web\""));
    // A route attached to a Gateway the input lacks (the platform team's): an item, the Gateway external.
    assert!(!includes.contains("\"shared\""), "{includes}");
    assert!(
        i.source.contains("external gateway edge;")
            && i.source
                .contains("resource gateway.networking.k8s.io/v1/HTTPRoute shared {"),
        "{}",
        i.source
    );
    assert!(!i.source.contains("resource example.com"), "{}", i.source);
}

fn one(yaml: &str) -> Imported {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: api, labels: {tier: api}}\nspec:\n  ports: [{name: http, port: 80}]\n---\n";
    let sources = parse_text(&format!("{svc}{yaml}"), "t.yaml", None).expect("parses");
    import(sources, &options(None))
}

#[test]
fn the_schema_and_the_references_decide_as_app_would() {
    // A field the HTTPRoute schema lacks: `app!` would refuse it (PCL0045).
    let i = one(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw, namespace: infra}]\n  rulez: []\n",
    );
    assert!(!i.source.contains("resource gateway"), "{}", i.source);
    assert!(
        i.source.contains("its CRD's schema refuses it (PCL0045"),
        "{}",
        i.source
    );
    // Another namespace's Gateway is someone else's: the route is an item.
    let i = one(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw, namespace: infra}]\n  rules: [{backendRefs: [{name: api, port: 80}]}]\n",
    );
    assert!(
        i.source
            .contains("resource gateway.networking.k8s.io/v1/HTTPRoute r {"),
        "{}",
        i.source
    );
    // Printed without a crate: the module names the file as given.
    let file = vendored().join("gateway.networking.k8s.io_httproutes.yaml");
    assert!(
        i.source
            .contains(&format!("crds {:?};", file.display().to_string())),
        "{}",
        i.source
    );
    // A Gateway the input lacks is someone else's: `external gateway`, declared once for two routes.
    let route = |name: &str| {
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}}}\nspec:\n  parentRefs: [{{name: edge, sectionName: https}}]\n  rules: [{{backendRefs: [{{name: api, port: 80}}]}}]\n"
        )
    };
    let i = one(&format!("{}---\n{}", route("a"), route("b")));
    assert_eq!(
        i.source.matches("external gateway edge;").count(),
        1,
        "{}",
        i.source
    );
    assert!(
        i.source
            .contains("resource gateway.networking.k8s.io/v1/HTTPRoute b {"),
        "{}",
        i.source
    );
    // A Gateway of the input that stays included (metadata a `resource` cannot write): so does its route.
    let i = one(&format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: edge, finalizers: [x]}}\nspec:\n  gatewayClassName: c\n  listeners: [{{name: https, port: 443, protocol: HTTPS}}]\n---\n{}",
        route("a")
    ));
    assert!(
        i.source
            .contains("its parent Gateway `edge` stays included"),
        "{}",
        i.source
    );
    assert!(!i.source.contains("external gateway"), "{}", i.source);
    // A port the Service does not have.
    let i = one(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw, namespace: infra}]\n  rules: [{backendRefs: [{name: api, port: 81}]}]\n",
    );
    assert!(
        i.source.contains("Service `api` has no port 81"),
        "{}",
        i.source
    );
    // A ServiceMonitor selecting no imported Service, and one scraping a port the Service lacks.
    let i = one(
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec:\n  selector: {matchLabels: {tier: web}}\n  endpoints: [{port: http}]\n",
    );
    assert!(
        i.source.contains("selects no imported Service"),
        "{}",
        i.source
    );
    let i = one(
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec:\n  selector: {matchLabels: {tier: api}}\n  endpoints: [{port: metrics}]\n",
    );
    assert!(
        i.source
            .contains("no Service it selects has a port named `metrics`"),
        "{}",
        i.source
    );
    let i = one(
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec:\n  selector: {matchLabels: {tier: api}}\n  endpoints: [{port: http}]\n",
    );
    assert!(
        i.source
            .contains("resource monitoring.coreos.com/v1/ServiceMonitor m {"),
        "{}",
        i.source
    );
    // A Certificate's Issuer must be among the objects; a ClusterIssuer is anyone's.
    let cert = |issuer: &str| {
        one(&format!(
            "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {{name: c}}\nspec:\n  secretName: c-tls\n  dnsNames: [a.example.com]\n  issuerRef: {{{issuer}}}\n"
        ))
    };
    let i = cert("name: le, kind: ClusterIssuer");
    assert!(
        i.source
            .contains("resource cert-manager.io/v1/Certificate c {"),
        "{}",
        i.source
    );
    let i = cert("name: le");
    assert!(
        i.source
            .contains("its Issuer `le` is not among the imported objects"),
        "{}",
        i.source
    );
    // Metadata a `resource` item cannot write.
    let i = one(
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m, finalizers: [x]}\nspec:\n  selector: {matchLabels: {tier: api}}\n  endpoints: [{port: http}]\n",
    );
    assert!(
        i.source.contains("`metadata.finalizers` has no place"),
        "{}",
        i.source
    );
}

#[test]
fn a_pod_monitor_is_an_item_when_it_selects_imported_pods_by_their_ports() {
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers:\n      - name: api\n        image: nginx:1.27\n        ports: [{name: metrics, containerPort: 9090}]\n---\n";
    let monitor = |selector: &str, endpoint: &str| {
        let yaml = format!(
            "{deploy}apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata: {{name: m}}\nspec:\n  selector: {{matchLabels: {{{selector}}}}}\n  podMetricsEndpoints: [{{{endpoint}}}]\n"
        );
        let sources = parse_text(&yaml, "t.yaml", None).expect("parses");
        import(sources, &options(None)).source
    };
    let s = monitor("app: api", "port: metrics");
    assert!(
        s.contains("resource monitoring.coreos.com/v1/PodMonitor m {"),
        "{s}"
    );
    let s = monitor("app: api", "portNumber: 9090");
    assert!(
        s.contains("resource monitoring.coreos.com/v1/PodMonitor m {"),
        "{s}"
    );
    let s = monitor("app: web", "port: metrics");
    assert!(s.contains("selects no imported workload's pods"), "{s}");
    let s = monitor("app: api", "port: http");
    assert!(
        s.contains("no workload it selects has a container port named `http`"),
        "{s}"
    );
    let s = monitor("app: api", "portNumber: 8080");
    assert!(
        s.contains("no workload it selects has container port 8080"),
        "{s}"
    );
}

#[test]
fn without_crds_custom_resources_stay_included() {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/crds");
    let sources = read_inputs(&[set.display().to_string()], &mut std::io::empty()).expect("reads");
    let i = import(
        sources,
        &Options {
            app: Some("shop".into()),
            include_path: "k8s/imported.json".into(),
            ..Options::default()
        },
    );
    assert!(!i.source.contains("resource "), "{}", i.source);
    assert!(!i.source.contains("crds "), "{}", i.source);
    assert!(i.crd_files.is_empty());
}
