//! The operator's objects for each way of getting its certificate (a ClusterIssuer, an existing Secret),
//! one replica (no PDB, no anti-affinity), and the resource table the macro resolves webhook resources
//! with, checked row by row against k8s-openapi.

use k8s_openapi::Resource as _;
use piceli_core::model::{App, Operator, OperatorTls, Target, Webhook, WebhookKind};
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
        }),
        webhooks: vec![Webhook {
            kind: WebhookKind::Mutate,
            name: s("pod-defaults"),
            resource: s("pods"),
            operations: vec![s("CREATE")],
            handlers: vec![s("policy::add_team"), s("policy::add_tier")],
            objects: vec![(s("inject"), s("yes"))],
            ..Webhook::default()
        }],
        ..App::default()
    }
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
