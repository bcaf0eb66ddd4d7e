//! What the importer writes for Services of no imported workload, RBAC objects named by path segments, and
//! objects no cluster accepts (left out with their JSON in a comment).

use piceli_import::read::parse_text;
use piceli_import::{Imported, Options, import};

fn run(yaml: &str) -> Imported {
    let sources = parse_text(yaml, "test.yaml", None).expect("parses");
    let options = Options {
        app: Some("t".into()),
        include_path: "k8s/imported.json".into(),
        ..Options::default()
    };
    import(sources, &options)
}

#[test]
fn services_of_no_imported_workload_are_written_as_they_are() {
    // Another app's pods, an ExternalName, no selector (Endpoints made by hand): `service NAME { spec }`.
    let orphan = "apiVersion: v1\nkind: Service\nmetadata: {name: ext}\nspec:\n  selector: {app: nothing}\n  ports: [{port: 80}]\n";
    let external = "---\napiVersion: v1\nkind: Service\nmetadata: {name: db, labels: {tier: data}}\nspec:\n  type: ExternalName\n  externalName: db.example.com\n";
    let manual = "---\napiVersion: v1\nkind: Service\nmetadata: {name: legacy}\nspec:\n  ports: [{name: pg, port: 5432}]\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: legacy}\nsubsets: [{addresses: [{ip: 10.0.0.7}], ports: [{name: pg, port: 5432}]}]\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: ext}\nsubsets: []\n";
    let job = "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    metadata: {labels: {app: once}}\n    spec:\n      restartPolicy: Never\n      containers: [{name: once, image: busybox:1.36}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: once}\nspec:\n  selector: {app: once}\n  ports: [{port: 80}]\n";
    let i = run(&format!("{orphan}{external}{manual}{job}"));
    assert!(
        i.source.contains(
            "    service ext {\n        spec: { selector: { app: \"nothing\" }, ports: [{ port: 80 }] },\n    }"
        ),
        "{}",
        i.source
    );
    assert!(
        i.source.contains(
            "    service db {\n        labels: { tier: \"data\" },\n        spec: { type: \"ExternalName\", externalName: \"db.example.com\" },\n    }"
        ),
        "{}",
        i.source
    );
    assert!(i.source.contains(
        "    service legacy {\n        spec: { ports: [{ name: \"pg\", port: 5432 }] },"
    ));
    assert!(
        i.source
            .contains("    service once {\n        spec: { selector: { app: \"once\" }")
    );
    // The hand-made Endpoints of the Service without a selector are kept (included); those of a Service
    // with one are the cluster's.
    let includes = i.includes.as_deref().unwrap_or_default();
    assert!(
        includes.contains("\"Endpoints\"") && includes.contains("10.0.0.7"),
        "{includes}"
    );
    assert!(!includes.contains("\"Service\""), "{includes}");
    assert!(
        i.skipped.iter().any(|s| s.starts_with("Endpoints ext")),
        "{:?}",
        i.skipped
    );
}

#[test]
fn rbac_objects_named_by_path_segments_are_first_class() {
    // RBAC names are path segments (`system:…`), so these are imported, as strings; a Service's name is
    // an RFC 1035 label, so one with a dot is left out (PCL0182) instead of breaking the module's build.
    let y = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'prometheus:reader'}\nrules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: 'prometheus:reader'}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: 'prometheus:reader'}\nsubjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: 'system:monitoring'}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web.v2}\nspec: {type: ExternalName, externalName: web.example.com}\n";
    let i = run(y);
    assert!(
        i.source.contains("    cluster_role \"prometheus:reader\" {\n        rules: [rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\"])],"),
        "{}",
        i.source
    );
    assert!(
        i.source.contains("    cluster_role_binding \"prometheus:reader\" {\n        role: \"prometheus:reader\",\n        subjects: [group(\"system:monitoring\")],"),
        "{}",
        i.source
    );
    let codes: Vec<&str> = i.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["PCL0182"], "{:?}", i.warnings);
    assert!(
        i.source.contains(
            "// piceli: PCL0182 Service web.v2 left out, its name is not a valid Service name"
        ),
        "{}",
        i.source
    );
    assert!(i.includes.is_none(), "{:?}", i.includes);
}

#[test]
fn network_policies_with_refused_selector_labels_are_left_out() {
    // No cluster accepts these selectors (a number as a value, a key with a space, a peer's invalid
    // value): left out with PCL0218 and their JSON at the end, not included (the include broke the build).
    let y = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: numbered}\nspec:\n  podSelector: {matchLabels: {version: 2}}\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: spaced}\nspec:\n  podSelector: {matchLabels: {'my app': web}}\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: peer}\nspec:\n  podSelector: {matchLabels: {app: db}}\n  ingress: [{from: [{namespaceSelector: {matchLabels: {team: -ops}}}]}]\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: unselected}\nspec:\n  policyTypes: [Ingress]\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: fine}\nspec:\n  podSelector: {matchLabels: {app: db}}\n  policyTypes: [Ingress]\n";
    let i = run(y);
    let codes: Vec<&str> = i.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["PCL0218"; 4], "{:?}", i.warnings);
    for name in ["numbered", "spaced", "peer"] {
        assert!(
            i.source.contains(&format!(
                "// piceli: PCL0218 NetworkPolicy {name} left out, selector label"
            )),
            "{}",
            i.source
        );
    }
    assert!(
        i.source.contains("    network_policy fine {"),
        "{}",
        i.source
    );
    assert!(i.includes.is_none(), "{:?}", i.includes);
}

#[test]
fn hand_made_endpoint_slices_of_a_service_without_a_selector_are_kept() {
    let service = "apiVersion: v1\nkind: Service\nmetadata: {name: legacy}\nspec:\n  ports: [{name: pg, port: 5432}]\n";
    let mine = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: legacy-1\n  labels: {kubernetes.io/service-name: legacy}\naddressType: IPv4\nports: [{name: pg, port: 5432}]\nendpoints: [{addresses: [10.0.0.7]}]\n";
    // Mirrored by the cluster from hand-made Endpoints, or of a Service with a selector: the cluster's.
    let mirrored = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: legacy-abcde\n  labels: {kubernetes.io/service-name: legacy, endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.7]}]\n";
    let selected = "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-1\n  labels: {kubernetes.io/service-name: web}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.8]}]\n";
    let i = run(&format!("{service}{mine}{mirrored}{selected}"));
    let includes = i.includes.as_deref().unwrap_or_default();
    assert!(
        includes.contains("\"legacy-1\"") && includes.contains("10.0.0.7"),
        "{includes}"
    );
    assert!(
        !includes.contains("legacy-abcde") && !includes.contains("web-1"),
        "{includes}"
    );
    for skipped in ["EndpointSlice legacy-abcde", "EndpointSlice web-1"] {
        assert!(
            i.skipped.iter().any(|s| s.starts_with(skipped)),
            "{skipped}: {:?}",
            i.skipped
        );
    }
    assert!(
        i.source.contains("EndpointSlice legacy-1"),
        "the include's comment names it: {}",
        i.source
    );
}

const API: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx:1.27, ports: [{name: http, containerPort: 8080}]}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: http}]\n";

#[test]
fn ingresses_of_a_default_backend_several_tls_entries_and_mixed_path_types_are_first_class() {
    let ingress = "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: shop}\nspec:\n  defaultBackend: {service: {name: web, port: {name: http}}}\n  tls:\n  - {hosts: [shop.example.com], secretName: shop-tls}\n  - {hosts: [api.example.com], secretName: api-tls}\n  rules:\n  - host: shop.example.com\n    http:\n      paths:\n      - {path: /, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}\n      - {path: /x, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}\n      - {path: /static, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}\n  - host: api.example.com\n    http:\n      paths:\n      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {name: http}}}}\n";
    let default_only = "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: fallback}\nspec:\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n";
    let i = run(&format!("{API}{ingress}{default_only}"));
    let s = &i.source;
    assert!(
        s.contains("    ingress shop {\n        tls: { \"shop-tls\": [\"shop.example.com\"], \"api-tls\": [\"api.example.com\"] },\n        rules: {\n            \"shop.example.com\": { \"/\": web => 80, \"/x\": web => 80, \"/static\": prefix(web => http) },\n            \"api.example.com\": { \"/\": implementation_specific(web => http) },\n        },\n        default: web => http,\n        path_type: \"Exact\",\n    }"),
        "{s}"
    );
    assert!(
        s.contains("    ingress fallback {\n        default: web => 80,\n    }"),
        "{s}"
    );
    // Neither Secret is in the input: each is `external`, with why, before the Ingress.
    for secret in ["shop-tls", "api-tls"] {
        assert!(
            s.contains(&format!("// piceli: Ingress shop takes its TLS certificate from it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it\n    external secret {secret};")),
            "{secret}: {s}"
        );
    }
    assert!(i.includes.is_none(), "{:?}", i.includes);
}

#[test]
fn a_tls_entry_the_dsl_cannot_name_stays_in_the_ingress_spec() {
    // A Secret kept in the include file (its `immutable: false`… no: an unknown field) and an entry
    // without a Secret (the controller's default certificate).
    let secret = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: kept}\ntype: kubernetes.io/tls\ndata: {tls.crt: eA==}\nextra: true\n";
    let ingress = "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: shop}\nspec:\n  tls: [{hosts: [shop.example.com], secretName: kept}]\n  rules:\n  - host: shop.example.com\n    http:\n      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: plain}\nspec:\n  tls: [{hosts: [plain.example.com]}]\n  rules:\n  - host: plain.example.com\n    http:\n      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]\n";
    let i = run(&format!("{API}{secret}{ingress}"));
    let s = &i.source;
    assert!(
        s.contains(
            "        spec: { tls: [{ hosts: [\"shop.example.com\"], secretName: \"kept\" }] },"
        ),
        "{s}"
    );
    assert!(
        s.contains("        spec: { tls: [{ hosts: [\"plain.example.com\"] }] },"),
        "{s}"
    );
    assert!(!s.contains("external secret"), "{s}");
}

#[test]
fn label_values_that_are_not_strings_are_quoted_with_a_warning() {
    let y = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {version: 2, canary: true, team: shop}\n  annotations: {replicas: 3}\ndata: {a: b}\n";
    let i = run(y);
    let s = &i.source;
    assert!(
        s.contains("labels: { version: \"2\", canary: \"true\", team: \"shop\" },"),
        "{s}"
    );
    assert!(s.contains("annotations: { replicas: \"3\" },"), "{s}");
    assert!(
        s.contains(
            "// piceli: PCL0185 label value `version: 2`, `canary: true` written as a string"
        ),
        "{s}"
    );
    let warnings: Vec<String> = i.warnings.iter().map(|w| w.line()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("PCL0185") && w.contains("annotation value `replicas: 3`")),
        "{warnings:?}"
    );
}
