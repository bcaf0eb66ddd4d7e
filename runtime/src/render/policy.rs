//! ServiceAccounts and RBAC (first, so workloads can use them), autoscalers and disruption budgets.

use super::Sink;
use super::meta::Cx;
use super::{json, merge_block};
use crate::error::Error;
use k8s_openapi::api::autoscaling::v2 as hpa;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::rbac::v1 as rbac;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use piceli_core::model::Subject;
use piceli_core::schema;

pub(super) fn identity(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for s in &cx.app.service_accounts {
        let mut object = json(
            "ServiceAccount",
            &ServiceAccount {
                metadata: cx.meta(&s.name.v, &s.labels, &s.annotations),
                automount_service_account_token: s.automount_token,
                ..ServiceAccount::default()
            },
        )?;
        merge_block(&mut object, &[], &s.spec, schema::SERVICE_ACCOUNT);
        out.push(object);
    }
    for r in &cx.app.roles {
        let rules = r
            .rules
            .iter()
            .map(|rule| {
                let list = |l: &[piceli_core::Spanned<String>]| {
                    (!l.is_empty()).then(|| l.iter().map(|s| s.v.clone()).collect())
                };
                rbac::PolicyRule {
                    api_groups: Some(rule.api_groups.iter().map(|s| s.v.clone()).collect()),
                    resources: list(&rule.resources),
                    verbs: rule.verbs.iter().map(|s| s.v.clone()).collect(),
                    resource_names: list(&rule.resource_names),
                    ..rbac::PolicyRule::default()
                }
            })
            .collect();
        out.push(if r.cluster {
            json(
                "ClusterRole",
                &rbac::ClusterRole {
                    metadata: cx.cluster_meta(&r.name.v, &r.labels, &r.annotations),
                    rules: Some(rules),
                    ..rbac::ClusterRole::default()
                },
            )?
        } else {
            json(
                "Role",
                &rbac::Role {
                    metadata: cx.meta(&r.name.v, &r.labels, &r.annotations),
                    rules: Some(rules),
                },
            )?
        });
    }
    for b in &cx.app.role_bindings {
        let declared_cluster_role = cx
            .app
            .roles
            .iter()
            .any(|r| r.name.v == b.role.v && r.cluster)
            && !cx
                .app
                .roles
                .iter()
                .any(|r| r.name.v == b.role.v && !r.cluster && !b.cluster);
        let role_is_cluster = b.external_cluster_role || declared_cluster_role;
        let role_ref = rbac::RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: if role_is_cluster {
                "ClusterRole"
            } else {
                "Role"
            }
            .into(),
            name: b.role.v.clone(),
        };
        let subjects = b
            .subjects
            .iter()
            .map(|s| subject(s, &cx.namespace))
            .collect();
        out.push(if b.cluster {
            json(
                "ClusterRoleBinding",
                &rbac::ClusterRoleBinding {
                    metadata: cx.cluster_meta(&b.name.v, &b.labels, &b.annotations),
                    role_ref,
                    subjects: Some(subjects),
                },
            )?
        } else {
            json(
                "RoleBinding",
                &rbac::RoleBinding {
                    metadata: cx.meta(&b.name.v, &b.labels, &b.annotations),
                    role_ref,
                    subjects: Some(subjects),
                },
            )?
        });
    }
    Ok(())
}

fn int_or_percent(text: &str) -> IntOrString {
    match text.parse::<i32>() {
        Ok(n) => IntOrString::Int(n),
        Err(_) => IntOrString::String(text.to_string()),
    }
}

pub(super) fn scaling(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for a in &cx.app.autoscalers {
        let kind = cx
            .app
            .workload(&a.scales.v)
            .map(|w| w.kind.kind())
            .unwrap_or("Deployment");
        let metric = |name: &str, percent: i64| hpa::MetricSpec {
            type_: "Resource".into(),
            resource: Some(hpa::ResourceMetricSource {
                name: name.into(),
                target: hpa::MetricTarget {
                    type_: "Utilization".into(),
                    average_utilization: Some(percent as i32),
                    ..hpa::MetricTarget::default()
                },
            }),
            ..hpa::MetricSpec::default()
        };
        let mut metrics = Vec::new();
        if let Some(c) = &a.cpu_percent {
            metrics.push(metric("cpu", c.v));
        }
        if let Some(m) = &a.memory_percent {
            metrics.push(metric("memory", m.v));
        }
        let mut object = json(
            "HorizontalPodAutoscaler",
            &hpa::HorizontalPodAutoscaler {
                metadata: cx.meta(&a.name.v, &a.labels, &a.annotations),
                spec: Some(hpa::HorizontalPodAutoscalerSpec {
                    scale_target_ref: hpa::CrossVersionObjectReference {
                        api_version: Some("apps/v1".into()),
                        kind: kind.into(),
                        name: a.scales.v.clone(),
                    },
                    min_replicas: Some(a.min.v as i32),
                    max_replicas: a.max.v as i32,
                    metrics: (!metrics.is_empty()).then_some(metrics),
                    ..hpa::HorizontalPodAutoscalerSpec::default()
                }),
                ..hpa::HorizontalPodAutoscaler::default()
            },
        )?;
        merge_block(
            &mut object,
            &["spec"],
            &a.spec,
            schema::HORIZONTAL_POD_AUTOSCALER_SPEC,
        );
        out.push(object);
    }
    for d in &cx.app.disruption_budgets {
        let mut object = json(
            "PodDisruptionBudget",
            &policy::PodDisruptionBudget {
                metadata: cx.meta(&d.name.v, &d.labels, &d.annotations),
                spec: Some(policy::PodDisruptionBudgetSpec {
                    selector: Some(LabelSelector {
                        match_labels: Some(cx.selector(&d.protects.v)),
                        ..LabelSelector::default()
                    }),
                    min_available: d.min_available.as_ref().map(|m| int_or_percent(&m.v)),
                    max_unavailable: d.max_unavailable.as_ref().map(|m| int_or_percent(&m.v)),
                    ..policy::PodDisruptionBudgetSpec::default()
                }),
                ..policy::PodDisruptionBudget::default()
            },
        )?;
        merge_block(
            &mut object,
            &["spec"],
            &d.spec,
            schema::POD_DISRUPTION_BUDGET_SPEC,
        );
        out.push(object);
    }
    Ok(())
}

/// A binding's subject as the RBAC API writes it.
fn subject(s: &Subject, namespace: &str) -> rbac::Subject {
    let (kind, name, namespace) = match s {
        Subject::Account(name) => ("ServiceAccount", &name.v, Some(namespace.to_string())),
        Subject::ForeignAccount { namespace, name } => {
            ("ServiceAccount", &name.v, Some(namespace.v.clone()))
        }
        Subject::User(name) => ("User", &name.v, None),
        Subject::Group(name) => ("Group", &name.v, None),
    };
    rbac::Subject {
        // Users and groups are named by the RBAC API group; ServiceAccounts by the core group ("").
        api_group: (kind != "ServiceAccount").then(|| "rbac.authorization.k8s.io".to_string()),
        kind: kind.into(),
        name: name.clone(),
        namespace,
    }
}
