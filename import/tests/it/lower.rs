//! Each lowering on a small manifest: which item and keys it becomes, what is included, what is warned.

use piceli_import::read::parse_text;
use piceli_import::{Imported, Options, import};

fn run(yaml: &str, ns: Option<&str>) -> Imported {
    let sources = parse_text(yaml, "test.yaml", None).expect("parses");
    let options = Options {
        app: Some("t".into()),
        namespace: ns.map(String::from),
        target: None,
        include_path: "k8s/imported.json".into(),
        ..Options::default()
    };
    import(sources, &options)
}

const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{containerPort: 80}]\n";

#[test]
fn a_deployment_with_one_container_uses_image_and_blocks() {
    let i = run(DEPLOY, None);
    assert!(i.source.contains("deployment web {"), "{}", i.source);
    assert!(i.source.contains("replicas: 2,"));
    assert!(i.source.contains("image: unpinned(\"nginx:1.27\"),"));
    assert!(i.source.contains("ports: [80],"), "{}", i.source);
    assert!(i.source.contains("pod_labels: { app: \"web\" },"));
    assert!(
        i.source
            .contains("// piceli: `nginx:1.27` is not pinned by digest")
    );
    assert!(i.includes.is_none());
}

#[test]
fn a_service_finds_its_workload_by_selector() {
    let svc = "---\napiVersion: v1\nkind: Service\nmetadata: {name: front}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n";
    let i = run(&format!("{DEPLOY}{svc}"), None);
    assert!(i.source.contains("service front -> web {"), "{}", i.source);
}

#[test]
fn a_service_of_a_workload_kept_as_it_is_is_still_first_class() {
    // The Deployment's container has no image (a mutating webhook sets it): it is included as it is, and
    // `app!` knows it from the include file, so its Service (selecting exactly its pods) is an item.
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers:\n      - name: api\n        ports: [{name: http, containerPort: 8080}]\n";
    let svc = "---\napiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports: [{name: http, port: 80, targetPort: http}]\n";
    let narrower = "---\napiVersion: v1\nkind: Service\nmetadata: {name: api-wide}\nspec:\n  selector: {app: api, tier: x}\n  ports: [{name: http, port: 80, targetPort: http}]\n";
    let i = run(&format!("{deploy}{svc}{narrower}"), None);
    assert!(!i.source.contains("deployment api"), "{}", i.source);
    assert!(i.source.contains("service api -> api {"), "{}", i.source);
    assert!(
        i.source.contains("ports: { http: 80 => http },"),
        "{}",
        i.source
    );
    let includes = i.includes.as_deref().unwrap_or_default();
    assert!(includes.contains("\"Deployment\""), "{includes}");
    // A selector that is not the workload's own would render differently: it is written as it is.
    assert!(!includes.contains("\"api-wide\""), "{includes}");
    assert!(
        i.source.contains("    service api-wide {\n        spec: {\n            selector: { app: \"api\", tier: \"x\" },"),
        "{}",
        i.source
    );
}

#[test]
fn secrets_read_the_environment_and_never_hold_values() {
    let s = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ntype: kubernetes.io/basic-auth\ndata: {password: c2VjcmV0}\nstringData: {user: admin}\n";
    let i = run(s, None);
    assert!(i.source.contains("secret db {"), "{}", i.source);
    assert!(i.source.contains("type: \"kubernetes.io/basic-auth\","));
    assert!(i.source.contains("password: from_env(\"DB_PASSWORD\")"));
    assert!(i.source.contains("user: from_env(\"DB_USER\")"));
    assert!(!i.source.contains("c2VjcmV0") && !i.source.contains("admin"));
    assert_eq!(
        i.env_example,
        "# Secret db, key password\nDB_PASSWORD=\n# Secret db, key user\nDB_USER=\n"
    );
}

#[test]
fn config_maps_pvcs_and_service_accounts() {
    let y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, labels: {tier: web}}\ndata: {MODE: prod}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: api}\nautomountServiceAccountToken: false\n";
    let i = run(y, None);
    assert!(i.source.contains("config_map settings {\n        labels: { tier: \"web\" },\n        data: { MODE: \"prod\" },"), "{}", i.source);
    assert!(i.source.contains("pvc data {\n        storage: \"1Gi\",\n        access: [\"ReadWriteOnce\"],\n        class: \"fast\",\n    }"));
    assert!(
        i.source
            .contains("service_account api {\n        automount: false,\n    }")
    );
}

#[test]
fn rbac_binds_declared_roles_and_accounts_and_includes_the_rest() {
    let y = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: api}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader}\nrules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: api-reads}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects: [{kind: ServiceAccount, name: api}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: jane-reads}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects: [{kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: viewers}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects: [{kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}, {kind: ServiceAccount, name: deployer, namespace: ci}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: not-a-role}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: elsewhere}\nsubjects: [{kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: [{apiGroups: [''], resources: [nodes], verbs: [get]}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: shadowed}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}\nsubjects: [{kind: ServiceAccount, name: api}]\n";
    let i = run(y, None);
    assert!(
        i.source
            .contains("rules: [rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\"])],"),
        "{}",
        i.source
    );
    assert!(i.source.contains(
        "role_binding api-reads {\n        role: reader,\n        subjects: [api],\n    }"
    ));
    // Users, groups, ServiceAccounts of other namespaces and ClusterRoles someone else makes.
    assert!(
        i.source.contains(
            "role_binding jane-reads {\n        role: reader,\n        subjects: [user(\"jane\")],\n    }"
        ),
        "{}",
        i.source
    );
    assert!(i.source.contains(
        "role_binding viewers {\n        role: cluster_role(\"view\"),\n        subjects: [group(\"devs\"), service_account(\"ci\", \"deployer\")],\n    }"
    ), "{}", i.source);
    // A Role the input does not have, and a RoleBinding of the ClusterRole `reader` that `role: reader`
    // would render as the Role `reader`: kept as they are.
    let included = i.includes.expect("includes");
    assert!(
        included.contains("not-a-role")
            && included.contains("shadowed")
            && !included.contains("jane-reads"),
        "{included}"
    );
}

#[test]
fn autoscalers_and_budgets_point_at_their_workload() {
    let y = format!(
        "{DEPLOY}---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}, maxReplicas: 5, metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 70}}}}}}]}}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec: {{maxUnavailable: 1, selector: {{matchLabels: {{app: web}}}}}}\n"
    );
    let i = run(&y, None);
    assert!(
        i.source.contains(
            "autoscaler web -> web {\n        min: 1,\n        max: 5,\n        cpu: 70,\n    }"
        ),
        "{}",
        i.source
    );
    assert!(
        i.source
            .contains("disruption_budget web -> web {\n        max_unavailable: 1,")
    );
}

#[test]
fn diagnostics_for_names_namespaces_and_duplicates() {
    let y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n";
    let i = run(y, Some("mine"));
    let codes: Vec<&str> = i.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["PCL0184", "PCL0182", "PCL0183"], "{:?}", i.warnings);
    assert!(
        i.source
            .contains("// piceli: PCL0182 ConfigMap Bad_Name left out")
    );
    assert!(
        i.source
            .contains("// piceli: PCL0183 was in namespace `other`")
    );
}

#[test]
fn cluster_made_objects_and_server_fields_are_skipped() {
    let y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-root-ca.crt}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web-1, ownerReferences: [{kind: Deployment, name: web, apiVersion: apps/v1, uid: x}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, uid: abc, resourceVersion: '7', managedFields: []}\ndata: {a: b}\n";
    let i = run(y, None);
    assert_eq!(i.skipped.len(), 2, "{:?}", i.skipped);
    assert!(i.source.contains("config_map mine"));
    assert!(!i.source.contains("abc"));
}

#[test]
fn the_guestbook_module_snapshot() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/guestbook/guestbook-all-in-one.yaml"
    ))
    .expect("corpus");
    let i = run(&text, None);
    insta::assert_snapshot!(i.source);
}

const USES_SECRETS: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        env:\n        - name: DB_PASSWORD\n          valueFrom: {secretKeyRef: {name: db, key: password}}\n        - name: TOKEN\n          valueFrom: {secretKeyRef: {name: synced, key: token}}\n      volumes:\n      - name: certs\n        secret: {secretName: web-tls}\n";

#[test]
fn secrets_someone_else_makes_become_external() {
    let y = format!(
        "{USES_SECRETS}---\napiVersion: v1\nkind: Secret\nmetadata: {{name: web-tls, annotations: {{cert-manager.io/certificate-name: web}}}}\ntype: kubernetes.io/tls\ndata: {{tls.crt: Y3J0, tls.key: a2V5}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: synced, ownerReferences: [{{apiVersion: external-secrets.io/v1, kind: ExternalSecret, name: synced, uid: u}}]}}\ndata: {{token: dG9r}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: unused, ownerReferences: [{{apiVersion: external-secrets.io/v1, kind: ExternalSecret, name: unused, uid: v}}]}}\ndata: {{token: dG9r}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: db}}\ndata: {{password: c2VjcmV0}}\n"
    );
    let i = run(&y, None);
    let s = &i.source;
    assert!(
        s.contains("    // piceli: issued by cert-manager for Certificate web: declared `external`, so the app refers to it and never writes, adopts or prunes it\n    external secret web-tls;"),
        "{s}"
    );
    assert!(
        s.contains("made by its owner ExternalSecret synced: declared `external`"),
        "{s}"
    );
    assert!(s.contains("external secret synced;"), "{s}");
    // Owned by another object and named by no workload: skipped as before.
    assert!(!s.contains("unused"), "{s}");
    assert!(i.skipped.iter().any(|k| k.starts_with("Secret unused")));
    // The app's own Secret still reads the environment; references to all three are first-class.
    assert!(s.contains("password: from_env(\"DB_PASSWORD\")"), "{s}");
    assert!(s.contains("DB_PASSWORD: secret(db.password)"), "{s}");
    assert!(s.contains("TOKEN: secret(synced.token)"), "{s}");
    assert!(!s.contains("Y3J0") && !s.contains("dG9r") && !s.contains("c2VjcmV0"));
    assert_eq!(i.env_example, "# Secret db, key password\nDB_PASSWORD=\n");
}

#[test]
fn secrets_external_declares_every_secret_external() {
    let y = format!(
        "{USES_SECRETS}---\napiVersion: v1\nkind: Secret\nmetadata: {{name: db}}\ndata: {{password: c2VjcmV0}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: synced}}\ndata: {{token: dG9r}}\n"
    );
    let sources = parse_text(&y, "test.yaml", None).expect("parses");
    let options = Options {
        app: Some("t".into()),
        include_path: "k8s/imported.json".into(),
        secrets: piceli_import::SecretMode::External,
        ..Options::default()
    };
    let i = import(sources, &options);
    assert!(
        i.source
            .contains("`--secrets external`: made outside the app: declared `external`"),
        "{}",
        i.source
    );
    assert!(i.source.contains("external secret db;"), "{}", i.source);
    assert!(i.source.contains("DB_PASSWORD: secret(db.password)"));
    assert!(!i.source.contains("from_env") && !i.source.contains("c2VjcmV0"));
    assert_eq!(i.env_example, "");
}

const NAMED_PORTS: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{name: http, containerPort: 8080}, {name: dns, containerPort: 53, protocol: UDP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: http}]\n";

#[test]
fn named_ports_and_ingresses_to_imported_services_are_first_class() {
    let y = format!(
        "{NAMED_PORTS}---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: shop}}\nspec:\n  ingressClassName: nginx\n  rules:\n  - http:\n      paths:\n      - {{path: /, pathType: Exact, backend: {{service: {{name: web, port: {{name: http}}}}}}}}\n  - host: shop.example.com\n    http:\n      paths:\n      - {{path: /api, pathType: Exact, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: elsewhere}}\nspec:\n  rules:\n  - http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: not-imported, port: {{number: 80}}}}}}}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: again}}\nspec:\n  rules:\n  - http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: not-imported, port: {{name: http}}}}}}}}\n"
    );
    let i = run(&y, None);
    let s = &i.source;
    assert!(
        s.contains("ports: { http: 8080, dns: port(53, protocol: \"UDP\") },"),
        "{s}"
    );
    assert!(
        s.contains("service web -> web {\n        ports: { http: 80 => http },"),
        "{s}"
    );
    assert!(
        s.contains("    ingress shop {\n        class: \"nginx\",\n        paths: { \"/\": web => http },\n        rules: { \"shop.example.com\": { \"/api\": web => 80 } },\n        path_type: \"Exact\",\n    }"),
        "{s}"
    );
    // A backend the input does not have (another app's Service): `external service`, declared once,
    // before the first Ingress that routes to it.
    assert!(i.includes.is_none(), "{:?}", i.includes);
    assert!(
        s.contains("// piceli: Ingress elsewhere routes to it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it\n    external service not-imported;\n\n    ingress elsewhere {\n        paths: { \"/\": not-imported => 80 },"),
        "{s}"
    );
    assert_eq!(
        s.matches("external service not-imported;").count(),
        1,
        "{s}"
    );
    assert!(
        s.contains("    ingress again {\n        paths: { \"/\": not-imported => http },"),
        "{s}"
    );
}

#[test]
fn unnamed_ports_are_a_list_and_a_mix_stays_in_the_block() {
    let i = run(DEPLOY, None);
    assert!(!i.source.contains("ports: {"), "{}", i.source);
    assert!(!i.source.contains("containerPort"), "{}", i.source);
    assert!(i.source.contains("ports: [80],"), "{}", i.source);
    let mixed = DEPLOY.replace(
        "ports: [{containerPort: 80}]",
        "ports: [{containerPort: 80}, {name: admin, containerPort: 9000}]",
    );
    let i = run(&mixed, None);
    assert!(
        i.source
            .contains("ports: [{ containerPort: 80 }, { name: \"admin\", containerPort: 9000 }]"),
        "{}",
        i.source
    );
}

#[test]
fn pod_fields_with_keys_use_them() {
    let pod = DEPLOY.replace(
        "      containers:\n",
        "      nodeSelector: {disktype: ssd}\n      priorityClassName: high\n      terminationGracePeriodSeconds: 45\n      hostNetwork: true\n      containers:\n",
    );
    let s = run(&pod, None).source;
    assert!(s.contains("node_selector: { disktype: \"ssd\" },"), "{s}");
    assert!(s.contains("priority: \"high\","), "{s}");
    assert!(s.contains("grace: 45,"), "{s}");
    assert!(s.contains("pod: { hostNetwork: true },"), "{s}");
    assert!(!s.contains("nodeSelector"), "{s}");
}

#[test]
fn the_app_is_named_from_its_labels_else_the_namespace() {
    let part_of = DEPLOY.replace(
        "metadata: {name: web}",
        "metadata: {name: web, labels: {app.kubernetes.io/part-of: Sock Shop}}",
    );
    let unnamed = |yaml: &str| {
        let sources = parse_text(yaml, "test.yaml", None).expect("parses");
        import(sources, &Options::default())
    };
    assert_eq!(unnamed(&part_of).app, "sock-shop");
    assert!(unnamed(&part_of).source.contains("app sock-shop;"));
    let in_ns = DEPLOY.replace(
        "metadata: {name: web}",
        "metadata: {name: web, namespace: shop}",
    );
    assert_eq!(unnamed(&in_ns).app, "shop");
}

const POD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {MODE: prod}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{name: http, containerPort: 80}]\n        resources: {limits: {memory: 128Mi}, requests: {cpu: 100m}}\n        readinessProbe: {httpGet: {path: /ready, port: http, httpHeaders: [{name: X-Probe, value: kubelet}]}, periodSeconds: 5}\n        livenessProbe: {tcpSocket: {port: 80}, initialDelaySeconds: 10}\n        startupProbe: {httpGet: {path: /, port: 8080}}\n        volumeMounts: [{name: conf, mountPath: /etc/web, readOnly: true}, {name: tmp, mountPath: /tmp}]\n      volumes: [{name: conf, configMap: {name: settings, defaultMode: 420}}, {name: tmp, emptyDir: {medium: Memory}}]\n";

#[test]
fn resources_probes_volumes_and_mounts_are_first_class_when_they_render_back() {
    let i = run(POD, None);
    let s = &i.source;
    assert!(
        s.contains("resources: { requests: { cpu: \"100m\" }, limits: { memory: \"128Mi\" } },"),
        "{s}"
    );
    assert!(
        s.contains(
            "ready: http_get(\"/ready\", port: http, period: 5, headers: { \"X-Probe\": \"kubelet\" }),"
        ),
        "{s}"
    );
    assert!(s.contains("live: tcp(port: 80, initial_delay: 10),"), "{s}");
    assert!(
        s.contains("mounts: { \"/etc/web\": volume(conf, read_only: true), \"/tmp\": tmp },"),
        "{s}"
    );
    assert!(
        s.contains("volumes: { conf: config_map(settings), tmp: empty_dir(memory: true) },"),
        "{s}"
    );
    // Port 8080 is not one of the container's ports: the DSL would refuse the probe, so it stays as written.
    assert!(
        s.contains("container: { startupProbe: { httpGet: { path: \"/\", port: 8080 } } },"),
        "{s}"
    );

    // A volume naming a ConfigMap the import does not declare, or a mount with `readOnly: false`, keeps
    // the lists in their blocks (the DSL would refuse or drop them).
    let i = run(
        &POD.replace("name: settings, defaultMode", "name: other, defaultMode"),
        None,
    );
    assert!(
        i.source
            .contains("{ name: \"conf\", configMap: { name: \"other\" } },"),
        "{}",
        i.source
    );
    assert!(i.source.contains("volumeMounts: ["), "{}", i.source);
    let i = run(&POD.replace("readOnly: true", "readOnly: false"), None);
    assert!(i.source.contains("volumes: { conf:"), "{}", i.source);
    assert!(i.source.contains("volumeMounts: ["), "{}", i.source);
}

const POLICY: &str = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: db}\nspec:\n  podSelector: {matchLabels: {role: db}, matchExpressions: [{key: tier, operator: Exists}]}\n  policyTypes: [Ingress, Egress]\n  ingress:\n  - from: [{podSelector: {matchLabels: {role: api}}, namespaceSelector: {matchLabels: {team: shop}}}, {ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]\n    ports: [{port: 5432}, {port: metrics}, {protocol: UDP, port: 53, endPort: 60}]\n  egress: [{}]\n";

#[test]
fn network_policies_use_the_selector_form() {
    let i = run(POLICY, None);
    let s = &i.source;
    assert!(
        s.contains("network_policy db {\n        pods: { role: \"db\" },"),
        "{s}"
    );
    assert!(s.contains("types: [\"Ingress\", \"Egress\"],"), "{s}");
    assert!(
        s.contains("pods({ role: \"api\" }, namespaces: { team: \"shop\" }),")
            && s.contains("cidr(\"10.0.0.0/8\", except: [\"10.1.0.0/16\"])"),
        "{s}"
    );
    assert!(
        s.contains("ports: [5432, \"metrics\", port(53, end: 60, protocol: \"UDP\")]"),
        "{s}"
    );
    assert!(s.contains("egress: [{}],"), "{s}");
    assert!(
        s.contains("spec: { podSelector: { matchExpressions: [{ key: \"tier\", operator: \"Exists\" }] } },"),
        "{s}"
    );
    assert!(i.includes.is_none());

    // Expressions in a peer's selector, or rules for a direction `policyTypes` leaves out, have no
    // first-class form: they stay in the policy's `spec:` block as written (nothing is included).
    let expr = POLICY.replace(
        "{podSelector: {matchLabels: {role: api}}, namespaceSelector",
        "{podSelector: {matchExpressions: [{key: a, operator: Exists}]}, namespaceSelector",
    );
    let i = run(&expr, None);
    let s = &i.source;
    assert!(i.includes.is_none(), "{:?}", i.includes);
    assert!(s.contains("types: [\"Ingress\", \"Egress\"],"), "{s}");
    assert!(s.contains("egress: [{}],"), "{s}");
    assert!(
        s.contains("spec: {\n")
            && s.contains("            ingress: [\n")
            && s.contains("matchExpressions: [{ key: \"a\", operator: \"Exists\" }]"),
        "{s}"
    );
    assert!(
        !s.contains("        ingress: [{ from"),
        "the ingress rules are not first-class: {s}"
    );
    let ignored = POLICY.replace("policyTypes: [Ingress, Egress]", "policyTypes: [Ingress]");
    let i = run(&ignored, None);
    let s = &i.source;
    assert!(i.includes.is_none(), "{:?}", i.includes);
    assert!(!s.contains("types:"), "{s}");
    assert!(s.contains("policyTypes: [\"Ingress\"]"), "{s}");
}

#[test]
fn objects_of_removed_api_versions_are_converted_and_first_class() {
    let y = "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{name: http, containerPort: 8080}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: http}]\n---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: shop}\nspec:\n  rules:\n  - http:\n      paths:\n      - {path: /, backend: {serviceName: web, servicePort: http}}\n---\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\nspec: {privileged: false}\n";
    let i = run(y, None);
    let s = &i.source;
    // The Deployment got its template's labels as the selector, so the Service finds it.
    assert!(s.contains("deployment web {"), "{s}");
    assert!(s.contains("service web -> web {"), "{s}");
    assert!(
        s.contains("// piceli: PCL0216: Deployment web: extensions/v1beta1 is not served since Kubernetes 1.16; converted to apps/v1; its selector is the template's labels"),
        "{s}"
    );
    // The Ingress's v1beta1 backend is v1's, routed to the declared Service.
    assert!(s.contains("ingress shop {"), "{s}");
    assert!(s.contains("paths: { \"/\": web => http },"), "{s}");
    assert!(s.contains("path_type: \"ImplementationSpecific\","), "{s}");
    // A kind that is gone is left out (`app!` would refuse it), its JSON in a comment at the end.
    assert!(i.includes.is_none(), "{:?}", i.includes);
    assert!(
        s.contains("// piceli: PCL0217 PodSecurityPolicy restricted left out, policy/v1beta1 is not served since Kubernetes 1.25, and PodSecurityPolicy has no replacement:\n"),
        "{s}"
    );
    assert!(s.contains("\"privileged\":false"), "{s}");
    let codes: Vec<&str> = i.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "PCL0216").count(),
        2,
        "{codes:?}"
    );
    assert!(codes.contains(&"PCL0217"), "{codes:?}");
}

#[test]
fn an_included_object_with_an_unpinned_image_marks_its_include() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n  containers: [{name: sh, image: 'busybox:1.36'}]\n";
    let i = run(pod, None);
    let s = &i.source;
    assert!(
        s.contains("// piceli: not pinned by digest: Pod debug (busybox:1.36); pin them in the file to drop `images: unpinned`\n    include json(\"k8s/imported.json\") {\n        images: unpinned,\n    }"),
        "{s}"
    );
}

#[test]
fn manifests_are_read_as_kubernetes_reads_yaml() {
    // YAML 1.1, as kubectl and Helm read it: `0744` is octal, `yes`/`off` are booleans, `~` is null.
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      automountServiceAccountToken: off\n      hostNetwork: ~\n      containers:\n      - name: web\n        image: nginx:1.27\n        stdin: yes\n        volumeMounts: [{name: conf, mountPath: /etc/web}]\n      volumes:\n      - name: conf\n        configMap: {name: conf, defaultMode: 0744}\n";
    let i = run(yaml, None);
    assert!(i.source.contains("defaultMode: 484"), "{}", i.source);
    assert!(!i.source.contains("744.0"), "{}", i.source);
    assert!(
        i.source.contains("automountServiceAccountToken: false"),
        "{}",
        i.source
    );
    assert!(i.source.contains("stdin: true"), "{}", i.source);
    assert!(!i.source.contains("hostNetwork"), "{}", i.source);
}

#[test]
fn labels_piceli_sets_are_dropped_with_a_note_and_helm_labels_kept() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n  labels:\n    app.kubernetes.io/name: web\n    app.kubernetes.io/managed-by: Helm\n    app.kubernetes.io/instance: rel\n    app.kubernetes.io/part-of: shop\n    app.kubernetes.io/version: \"1.0\"\n    helm.sh/chart: web-0.1.0\ndata: {a: b}\n";
    let i = run(yaml, None);
    for kept in [
        "\"app.kubernetes.io/instance\": \"rel\"",
        "\"app.kubernetes.io/part-of\": \"shop\"",
        "\"app.kubernetes.io/version\": \"1.0\"",
        "\"helm.sh/chart\": \"web-0.1.0\"",
    ] {
        assert!(i.source.contains(kept), "{kept}: {}", i.source);
    }
    assert!(
        i.source.contains(
            "// piceli: label `app.kubernetes.io/managed-by: Helm` dropped: Piceli sets `app.kubernetes.io/managed-by` itself"
        ),
        "{}",
        i.source
    );
    assert!(
        i.source
            .contains("// piceli: label `app.kubernetes.io/name: web` dropped"),
        "{}",
        i.source
    );
    assert!(
        !i.source.contains("\"app.kubernetes.io/managed-by\""),
        "{}",
        i.source
    );
}
