//! The operator's objects for each way of getting its certificate (a ClusterIssuer, an existing Secret),
//! one replica (no PDB, no anti-affinity), a webhook on the app's own custom resource (its rule from the
//! CRD; a name the CRD does not have is PCL0178), and the resource table the macro resolves webhook
//! resources with, checked row by row against k8s-openapi.

use k8s_openapi::Resource as _;
use piceli_core::Coded;
use piceli_core::model::{
    App, Include, Operator, OperatorTls, Target, Webhook, WebhookKind, WebhookResource,
};
use piceli_core::resources::{RESOURCES, lookup};
use piceli_core::spanned::Spanned;
use piceli_runtime::render::{Options, render, to_yaml};

fn s(v: &str) -> Spanned<String> {
    Spanned::bare(v.to_string())
}

fn app(tls: OperatorTls, replicas: i64) -> App {
    App {
        name: s("guard"),
        targets: vec![Target {
            name: s("prod"),
            namespace: s("policy"),
            ..Target::default()
        }],
        operator: Some(Operator {
            name: s("guard"),
            image: s(
                "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
            ),
            unpinned: false,
            replicas: Spanned::bare(replicas),
            tls,
            annotations: Vec::new(),
            env: Vec::new(),
        }),
        webhooks: vec![Webhook {
            kind: WebhookKind::Mutate,
            name: s("pod-defaults"),
            resources: vec![WebhookResource::new(s("pods"))],
            operations: vec![s("CREATE")],
            handlers: vec![s("policy::add_team"), s("policy::add_tier")],
            objects: vec![(s("inject"), s("yes"))],
            ..Webhook::default()
        }],
        ..App::default()
    }
}

/// The first rendered object of `kind`.
fn object<'a>(objects: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("a {kind} among the rendered objects"))
}

fn yaml(app: &App) -> String {
    to_yaml(&render(app, &Options::default()).expect("renders").objects).expect("yaml")
}

#[test]
fn certificate_from_a_cluster_issuer() {
    insta::assert_snapshot!(yaml(&app(OperatorTls::ClusterIssuer(s("corp-ca")), 1)));
}

#[test]
fn certificate_from_an_existing_secret() {
    let text = yaml(&app(OperatorTls::Secret(s("guard-serving")), 3));
    assert!(
        !text.contains("cert-manager.io/v1"),
        "no cert-manager objects"
    );
    assert!(text.contains("cert-manager.io/inject-ca-from-secret: policy/guard-serving"));
    insta::assert_snapshot!(text);
}

/// `tls: self_managed`: no cert-manager objects and no CA-injection annotation; the operator's pod gets
/// its token and reads the Secret through the API (no volume), and the RBAC it needs for that: its
/// Secret and Lease in its namespace, its own webhook configurations by name.
#[test]
fn a_self_managed_certificate_needs_no_cert_manager_and_gets_its_rbac() {
    let rendered = render(&app(OperatorTls::SelfManaged, 2), &Options::default()).expect("renders");
    let kinds: Vec<&str> = rendered
        .objects
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    assert!(
        !kinds.contains(&"Certificate") && !kinds.contains(&"Issuer"),
        "{kinds:?}"
    );
    let find = |kind: &str| object(&rendered.objects, kind);
    let config = find("MutatingWebhookConfiguration");
    assert!(
        config["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| !a.keys().any(|k| k.starts_with("cert-manager.io/"))),
        "{config}"
    );
    let pod = &find("Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], true);
    assert!(pod.get("volumes").is_none(), "{pod}");
    assert_eq!(pod["containers"][0]["args"], serde_json::json!(["serve"]));
    let role = find("Role");
    assert_eq!(role["metadata"]["namespace"], "policy");
    let rules = role["rules"].to_string();
    assert!(
        rules.contains("secrets") && rules.contains("leases"),
        "{rules}"
    );
    let cluster = find("ClusterRole");
    assert_eq!(
        cluster["rules"],
        serde_json::json!([{
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
            "verbs": ["get", "update"],
            "resourceNames": ["guard.policy"],
        }])
    );
    assert!(kinds.contains(&"RoleBinding") && kinds.contains(&"ClusterRoleBinding"));
}

/// `env:` of the operator goes into its `serve` container after the variables the render sets itself
/// (with controllers: the pod's name and namespace), a literal as `value`, a Secret key as `valueFrom`.
#[test]
fn the_operators_env_follows_the_variables_the_render_sets() {
    use piceli_core::model::{EnvValue, EnvVar, External, ExternalKind};
    let mut app = app(OperatorTls::SelfManaged, 1);
    app.externals.push(External {
        kind: ExternalKind::Secret,
        name: s("otel"),
    });
    if let Some(op) = app.operator.as_mut() {
        op.env = vec![
            EnvVar {
                name: s("OTEL_EXPORTER_OTLP_ENDPOINT"),
                value: EnvValue::Literal(s("http://collector.observability:4318")),
            },
            EnvVar {
                name: s("OTEL_EXPORTER_OTLP_HEADERS"),
                value: EnvValue::SecretKey {
                    secret: s("otel"),
                    key: s("headers"),
                },
            },
        ];
    }
    let rendered = render(&app, &Options::default()).expect("renders");
    let deployment = object(&rendered.objects, "Deployment");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["env"],
        serde_json::json!([
            { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
            { "name": "POD_NAMESPACE", "valueFrom": { "fieldRef": { "fieldPath": "metadata.namespace" } } },
            { "name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://collector.observability:4318" },
            { "name": "OTEL_EXPORTER_OTLP_HEADERS", "valueFrom": { "secretKeyRef": { "name": "otel", "key": "headers" } } },
        ])
    );
}

/// The app with a validating webhook on `resource`, one of its custom resources, and the CRD of a
/// cluster-scoped `lamps.example.com` served at v1 and v2 (v1beta1 no longer served).
fn custom_app(resource: &str) -> App {
    let mut a = app(OperatorTls::SelfSigned, 1);
    a.webhooks = vec![Webhook {
        kind: WebhookKind::Validate,
        name: s("lamp-color"),
        resources: vec![WebhookResource {
            name: s(resource),
            custom: true,
        }],
        operations: vec![s("CREATE"), s("UPDATE")],
        handlers: vec![s("policy::known_color")],
        ..Webhook::default()
    }];
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "lamps.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Lamp", "plural": "lamps", "singular": "lamp"},
            "scope": "Cluster",
            "versions": [
                {"name": "v1beta1", "served": false, "storage": false},
                {"name": "v1", "served": true, "storage": true},
                {"name": "v2", "served": true, "storage": false},
            ],
        },
    });
    a.includes
        .push(Include::objects(piceli_core::spanned::Loc(0), vec![crd]));
    a
}

#[test]
fn a_webhook_on_a_custom_resource_takes_its_rule_from_the_crd() {
    let rendered = render(&custom_app("lamps.example.com"), &Options::default()).expect("renders");
    let config = object(&rendered.objects, "ValidatingWebhookConfiguration");
    assert_eq!(
        config["webhooks"][0]["rules"][0],
        serde_json::json!({
            "apiGroups": ["example.com"],
            "apiVersions": ["v1", "v2"],
            "resources": ["lamps"],
            "operations": ["CREATE", "UPDATE"],
            "scope": "Cluster",
        })
    );
}

#[test]
fn a_custom_resource_name_the_crd_does_not_have_is_pcl0178() {
    let err = render(&custom_app("lamps.example.org"), &Options::default())
        .expect_err("the CRD is lamps.example.com");
    assert_eq!(err.code(), piceli_core::Code::WebhookCustomResourceMismatch);
    assert!(
        err.to_string().contains("`lamps.example.org`")
            && err.to_string().contains("lamps.example.com"),
        "{err}"
    );
    assert!(err.help().contains("lamps.example.com"), "{}", err.help());
}

/// A generic webhook: one rule per listed resource, a custom resource's from its CRD, and a wildcard
/// `*.GROUP` as every resource, version and scope of that group.
#[test]
fn a_generic_webhook_has_a_rule_per_resource_and_wildcards_cover_a_group() {
    let mut a = custom_app("lamps.example.com");
    let hook = &mut a.webhooks[0];
    hook.kind = WebhookKind::Mutate;
    hook.generic = true;
    hook.resources
        .insert(0, WebhookResource::new(s("configmaps")));
    hook.resources
        .push(WebhookResource::new(s("*.guard.example.com")));
    let rendered = render(&a, &Options::default()).expect("renders");
    let config = object(&rendered.objects, "MutatingWebhookConfiguration");
    let ops = serde_json::json!(["CREATE", "UPDATE"]);
    assert_eq!(
        config["webhooks"][0]["rules"],
        serde_json::json!([
            {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "operations": ops, "scope": "Namespaced"},
            {"apiGroups": ["example.com"], "apiVersions": ["v1", "v2"], "resources": ["lamps"], "operations": ops, "scope": "Cluster"},
            {"apiGroups": ["guard.example.com"], "apiVersions": ["*"], "resources": ["*"], "operations": ops, "scope": "*"},
        ])
    );
    assert!(
        !rendered
            .objects
            .iter()
            .any(|o| o["kind"] == "Role" || o["kind"] == "ClusterRole"),
        "a webhook, generic or not, reads nothing from the API: no RBAC"
    );
}

/// Render prints what `apply` applies, in its order: every object's apply level is at least the one
/// before it (the engine sorts by level, stably), included objects at their kind's level after the
/// generated ones.
#[test]
fn objects_come_in_the_engines_apply_order() {
    let mut a = custom_app("lamps.example.com");
    a.operator.as_mut().expect("operator").replicas = Spanned::bare(2);
    a.controllers = vec![piceli_core::model::ControllerDecl {
        name: s("lamps"),
        resource: s("configmaps"),
        plural: "configmaps".into(),
        namespaced: true,
        handler: s("policy::reconcile"),
        ..Default::default()
    }];
    let included = |kind: &str, api_version: &str| serde_json::json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "extra"}});
    a.includes.push(Include::objects(
        piceli_core::spanned::Loc(0),
        vec![
            included("Ingress", "networking.k8s.io/v1"),
            included("ConfigMap", "v1"),
            included("Lamp", "example.com/v1"),
            included("Service", "v1"),
        ],
    ));
    let rendered = render(&a, &Options::default()).expect("renders");
    let kinds: Vec<&str> = rendered
        .objects
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "CustomResourceDefinition",
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Issuer",
            "Certificate",
            "Issuer",
            "Certificate",
            "Deployment",
            "ValidatingWebhookConfiguration",
            "Lamp",
            "Service",
            "Service",
            "PodDisruptionBudget",
            "Ingress",
        ]
    );
    let levels: Vec<u32> = kinds
        .iter()
        .map(|k| piceli_runtime::engine::plan::level(k))
        .collect();
    assert!(levels.is_sorted(), "{kinds:?} at levels {levels:?}");
}

#[test]
fn the_resource_table_matches_k8s_openapi() {
    macro_rules! check {
        ($($ty:ty),* $(,)?) => {{
            let mut seen = 0;
            $(
                let written = if <$ty>::GROUP.is_empty() {
                    <$ty>::URL_PATH_SEGMENT.to_string()
                } else {
                    format!("{}.{}", <$ty>::URL_PATH_SEGMENT, <$ty>::GROUP)
                };
                let row = lookup(&written).unwrap_or_else(|| panic!("{written} is not in the table"));
                assert_eq!(row.kind, <$ty>::KIND, "{written}");
                assert_eq!(row.version, <$ty>::VERSION, "{written}");
                // The path the macro emits (under `k8s_openapi::api`) names this very type.
                assert_eq!(row.rust_type, stringify!($ty).replace(' ', ""), "{written}");
                seen += 1;
            )*
            seen
        }};
    }
    use k8s_openapi::api::*;
    let seen = check!(
        core::v1::ConfigMap,
        core::v1::Endpoints,
        core::v1::Event,
        core::v1::LimitRange,
        core::v1::Namespace,
        core::v1::Node,
        core::v1::PersistentVolumeClaim,
        core::v1::PersistentVolume,
        core::v1::Pod,
        core::v1::PodTemplate,
        core::v1::ReplicationController,
        core::v1::ResourceQuota,
        core::v1::Secret,
        core::v1::ServiceAccount,
        core::v1::Service,
        admissionregistration::v1::MutatingWebhookConfiguration,
        admissionregistration::v1::ValidatingWebhookConfiguration,
        apps::v1::ControllerRevision,
        apps::v1::DaemonSet,
        apps::v1::Deployment,
        apps::v1::ReplicaSet,
        apps::v1::StatefulSet,
        autoscaling::v2::HorizontalPodAutoscaler,
        batch::v1::CronJob,
        batch::v1::Job,
        certificates::v1::CertificateSigningRequest,
        coordination::v1::Lease,
        discovery::v1::EndpointSlice,
        networking::v1::IngressClass,
        networking::v1::Ingress,
        networking::v1::NetworkPolicy,
        node::v1::RuntimeClass,
        policy::v1::PodDisruptionBudget,
        rbac::v1::ClusterRoleBinding,
        rbac::v1::ClusterRole,
        rbac::v1::RoleBinding,
        rbac::v1::Role,
        scheduling::v1::PriorityClass,
        storage::v1::CSIDriver,
        storage::v1::CSINode,
        storage::v1::StorageClass,
        storage::v1::VolumeAttachment,
    );
    assert_eq!(seen, RESOURCES.len(), "every row is checked");
}

/// The Containerfile builds with the toolchain the workspace pins (`rust-toolchain.toml`), runs as the
/// distroless non-root user, and starts `serve`.
#[test]
fn the_containerfile_builds_with_the_pinned_toolchain_and_runs_serve_as_non_root() {
    let pinned = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rust-toolchain.toml"
    ))
    .expect("rust-toolchain.toml");
    let channel = pinned
        .lines()
        .find_map(|l| l.trim().strip_prefix("channel = "))
        .expect("a channel")
        .trim_matches('"');
    let text = piceli_runtime::render::containerfile(&app(OperatorTls::SelfSigned, 2), "guard");
    assert!(
        text.contains(&format!(
            "FROM docker.io/library/rust:{channel}-slim-bookworm@sha256:"
        )),
        "{text}"
    );
    // Both stages are pinned by digest: a tag can be moved, a digest cannot.
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{text}");
    for from in froms {
        let image = from.split_whitespace().nth(1).expect("an image");
        let (_, digest) = image.split_once("@sha256:").expect("pinned by digest");
        assert!(
            digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{from}"
        );
    }
    assert!(
        text.contains("cargo build --release --locked --bin guard"),
        "{text}"
    );
    assert!(text.contains("USER 65532:65532"), "{text}");
    assert!(text.contains(":nonroot"), "{text}");
    assert!(text.contains("CMD [\"serve\"]"), "{text}");
}
