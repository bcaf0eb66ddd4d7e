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
