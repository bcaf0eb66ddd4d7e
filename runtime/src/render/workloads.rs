//! Workloads: pod templates, containers, probes and volumes, wrapped in their controller kind.

use super::Sink;
use super::meta::{Cx, to_map};
use super::{json, merge_block};
use crate::error::Error;
use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec, StatefulSet, StatefulSetSpec,
};
use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use piceli_core::model::*;
use piceli_core::schema;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn workloads(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for w in &cx.app.workloads {
        out.push(workload(cx, w)?);
    }
    Ok(())
}

fn workload(cx: &Cx, w: &Workload) -> Result<Value, Error> {
    let mut object = generated(cx, w)?;
    merge_blocks(&mut object, w);
    Ok(object)
}

/// The workload's `spec:`, `pod:` and `container:` blocks, merged under what the DSL generated.
fn merge_blocks(object: &mut Value, w: &Workload) {
    merge_block(object, &["spec"], &w.spec, schema::workload_spec(w.kind));
    let template: &[&str] = if w.kind == WorkloadKind::CronJob {
        &["spec", "jobTemplate", "spec", "template", "spec"]
    } else {
        &["spec", "template", "spec"]
    };
    let Some(pod) = template
        .iter()
        .try_fold(&mut *object, |at, key| at.get_mut(*key))
    else {
        return;
    };
    for (list, containers) in [
        ("containers", &w.containers),
        ("initContainers", &w.init_containers),
    ] {
        for (i, c) in containers.iter().enumerate() {
            if let Some(rendered) = pod.get_mut(list).and_then(|l| l.get_mut(i)) {
                merge_block(rendered, &[], &c.block, schema::CONTAINER);
            }
        }
    }
    merge_block(pod, &[], &w.pod, schema::POD_SPEC);
}

fn generated(cx: &Cx, w: &Workload) -> Result<Value, Error> {
    let meta = cx.meta(&w.name.v, &w.labels, &w.annotations);
    let selector = LabelSelector {
        match_labels: Some(cx.selector(&w.name.v)),
        ..LabelSelector::default()
    };
    let template = pod_template(cx, w);
    let replicas = w.replicas.as_ref().map(|r| r.v as i32);
    match w.kind {
        WorkloadKind::Deployment => json(
            "Deployment",
            &Deployment {
                metadata: meta,
                spec: Some(DeploymentSpec {
                    replicas,
                    selector,
                    template,
                    ..DeploymentSpec::default()
                }),
                ..Deployment::default()
            },
        ),
        WorkloadKind::StatefulSet => json(
            "StatefulSet",
            &StatefulSet {
                metadata: meta,
                spec: Some(StatefulSetSpec {
                    replicas,
                    selector,
                    template,
                    service_name: w.service_name.as_ref().map(|s| s.v.clone()),
                    volume_claim_templates: (!w.volume_claims.is_empty()).then(|| {
                        w.volume_claims
                            .iter()
                            .map(|c| claim_template(cx, c))
                            .collect()
                    }),
                    ..StatefulSetSpec::default()
                }),
                ..StatefulSet::default()
            },
        ),
        WorkloadKind::DaemonSet => json(
            "DaemonSet",
            &DaemonSet {
                metadata: meta,
                spec: Some(DaemonSetSpec {
                    selector,
                    template,
                    ..DaemonSetSpec::default()
                }),
                ..DaemonSet::default()
            },
        ),
        WorkloadKind::Job => json(
            "Job",
            &Job {
                metadata: meta,
                spec: Some(job_spec(w, template)),
                ..Job::default()
            },
        ),
        WorkloadKind::CronJob => json(
            "CronJob",
            &CronJob {
                metadata: meta,
                spec: Some(CronJobSpec {
                    schedule: w.schedule.as_ref().map(|s| s.v.clone()).unwrap_or_default(),
                    job_template: JobTemplateSpec {
                        metadata: Some(ObjectMeta {
                            labels: Some(cx.selector(&w.name.v)),
                            ..ObjectMeta::default()
                        }),
                        spec: Some(job_spec(w, template)),
                    },
                    ..CronJobSpec::default()
                }),
                ..CronJob::default()
            },
        ),
    }
}

fn job_spec(w: &Workload, template: core::PodTemplateSpec) -> JobSpec {
    JobSpec {
        template,
        backoff_limit: w.backoff_limit.as_ref().map(|n| n.v as i32),
        completions: w.completions.as_ref().map(|n| n.v as i32),
        parallelism: w.parallelism.as_ref().map(|n| n.v as i32),
        ..JobSpec::default()
    }
}

fn pod_template(cx: &Cx, w: &Workload) -> core::PodTemplateSpec {
    // A selector written in `spec:` is the user's: the pods keep the labels written for them (the app's,
    // `pod_labels:` and the selector's), none of Piceli's, so a workload taken over keeps its pods.
    let mut labels = if w.written_selector().is_some() {
        to_map(&cx.app.labels)
    } else {
        cx.base_labels()
    };
    labels.extend(to_map(&w.pod_labels));
    labels.extend(cx.selector(&w.name.v));
    let restart_policy = if w.kind.runs_to_completion() {
        Some(
            w.restart_policy
                .as_ref()
                .map(|r| r.v.clone())
                .unwrap_or_else(|| "Never".into()),
        )
    } else {
        None
    };
    let restricted = w.security.as_ref().is_some_and(|s| s.v == "restricted");
    core::PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels),
            annotations: (!w.pod_annotations.is_empty()).then(|| to_map(&w.pod_annotations)),
            ..ObjectMeta::default()
        }),
        spec: Some(core::PodSpec {
            containers: w
                .containers
                .iter()
                .map(|c| container(c, restricted))
                .collect(),
            init_containers: (!w.init_containers.is_empty()).then(|| {
                w.init_containers
                    .iter()
                    .map(|c| container(c, restricted))
                    .collect()
            }),
            security_context: restricted.then(|| core::PodSecurityContext {
                run_as_non_root: Some(true),
                seccomp_profile: Some(core::SeccompProfile {
                    type_: "RuntimeDefault".into(),
                    ..core::SeccompProfile::default()
                }),
                ..core::PodSecurityContext::default()
            }),
            topology_spread_constraints: (!w.spread.is_empty())
                .then(|| w.spread.iter().map(|s| spread(cx, w, &s.v)).collect()),
            volumes: (!w.volumes.is_empty()).then(|| w.volumes.iter().map(volume).collect()),
            service_account_name: w.service_account.as_ref().map(|s| s.v.clone()),
            node_selector: (!w.node_selector.is_empty()).then(|| to_map(&w.node_selector)),
            restart_policy,
            ..core::PodSpec::default()
        }),
    }
}

fn strings(list: &[piceli_core::Spanned<String>]) -> Option<Vec<String>> {
    (!list.is_empty()).then(|| list.iter().map(|s| s.v.clone()).collect())
}

/// `spread: zones | hosts`: at most one more pod in one zone (or node) than in another, when possible.
fn spread(cx: &Cx, w: &Workload, over: &str) -> core::TopologySpreadConstraint {
    core::TopologySpreadConstraint {
        max_skew: 1,
        topology_key: if over == "hosts" {
            "kubernetes.io/hostname"
        } else {
            "topology.kubernetes.io/zone"
        }
        .into(),
        when_unsatisfiable: "ScheduleAnyway".into(),
        label_selector: Some(LabelSelector {
            match_labels: Some(cx.selector(&w.name.v)),
            ..LabelSelector::default()
        }),
        ..core::TopologySpreadConstraint::default()
    }
}

fn container(c: &Container, restricted: bool) -> core::Container {
    core::Container {
        security_context: restricted.then(|| core::SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(core::Capabilities {
                drop: Some(vec!["ALL".into()]),
                ..core::Capabilities::default()
            }),
            ..core::SecurityContext::default()
        }),
        name: c.name.v.clone(),
        image: Some(c.image.v.clone()),
        image_pull_policy: c.pull_policy.as_ref().map(|p| p.v.clone()),
        command: strings(&c.command),
        args: strings(&c.args),
        env: (!c.env.is_empty()).then(|| c.env.iter().map(env_var).collect()),
        env_from: (!c.env_from.is_empty()).then(|| c.env_from.iter().map(env_from).collect()),
        ports: (!c.ports.is_empty()).then(|| {
            c.ports
                .iter()
                .map(|p| core::ContainerPort {
                    // `ports: [8080]`: no name, as written.
                    name: (!p.name.v.is_empty()).then(|| p.name.v.clone()),
                    container_port: p.number.v as i32,
                    protocol: p.protocol.as_ref().map(|s| s.v.clone()),
                    ..core::ContainerPort::default()
                })
                .collect()
        }),
        resources: resources(&c.resources),
        readiness_probe: c.readiness.as_ref().map(probe),
        liveness_probe: c.liveness.as_ref().map(probe),
        startup_probe: c.startup.as_ref().map(probe),
        volume_mounts: (!c.mounts.is_empty()).then(|| {
            c.mounts
                .iter()
                .map(|m| core::VolumeMount {
                    name: m.volume.v.clone(),
                    mount_path: m.path.v.clone(),
                    read_only: m.read_only.then_some(true),
                    sub_path: m.sub_path.as_ref().map(|s| s.v.clone()),
                    ..core::VolumeMount::default()
                })
                .collect()
        }),
        ..core::Container::default()
    }
}

fn env_from(e: &EnvFrom) -> core::EnvFromSource {
    match e {
        EnvFrom::ConfigMap(n) => core::EnvFromSource {
            config_map_ref: Some(core::ConfigMapEnvSource {
                name: n.v.clone(),
                ..core::ConfigMapEnvSource::default()
            }),
            ..core::EnvFromSource::default()
        },
        EnvFrom::Secret(n) => core::EnvFromSource {
            secret_ref: Some(core::SecretEnvSource {
                name: n.v.clone(),
                ..core::SecretEnvSource::default()
            }),
            ..core::EnvFromSource::default()
        },
    }
}

pub(super) fn env_var(e: &EnvVar) -> core::EnvVar {
    let (value, value_from) = match &e.value {
        EnvValue::Literal(v) => (Some(v.v.clone()), None),
        EnvValue::ConfigMapKey { config_map, key } => (
            None,
            Some(core::EnvVarSource {
                config_map_key_ref: Some(core::ConfigMapKeySelector {
                    name: config_map.v.clone(),
                    key: key.v.clone(),
                    ..core::ConfigMapKeySelector::default()
                }),
                ..core::EnvVarSource::default()
            }),
        ),
        EnvValue::SecretKey { secret, key } => (
            None,
            Some(core::EnvVarSource {
                secret_key_ref: Some(core::SecretKeySelector {
                    name: secret.v.clone(),
                    key: key.v.clone(),
                    ..core::SecretKeySelector::default()
                }),
                ..core::EnvVarSource::default()
            }),
        ),
        EnvValue::Field(path) => (
            None,
            Some(core::EnvVarSource {
                field_ref: Some(core::ObjectFieldSelector {
                    field_path: path.v.clone(),
                    ..core::ObjectFieldSelector::default()
                }),
                ..core::EnvVarSource::default()
            }),
        ),
    };
    core::EnvVar {
        name: e.name.v.clone(),
        value,
        value_from,
    }
}

fn quantities(
    list: &[(piceli_core::Name, piceli_core::Spanned<String>)],
) -> Option<BTreeMap<String, Quantity>> {
    (!list.is_empty()).then(|| {
        list.iter()
            .map(|(k, v)| (k.v.clone(), Quantity(v.v.clone())))
            .collect()
    })
}

fn resources(r: &Resources) -> Option<core::ResourceRequirements> {
    if r.requests.is_empty() && r.limits.is_empty() {
        return None;
    }
    Some(core::ResourceRequirements {
        requests: quantities(&r.requests),
        limits: quantities(&r.limits),
        ..core::ResourceRequirements::default()
    })
}

fn port(p: &PortRef) -> IntOrString {
    match p {
        PortRef::Name(n) => IntOrString::String(n.v.clone()),
        PortRef::Number(n) => IntOrString::Int(n.v as i32),
    }
}

fn probe(p: &Probe) -> core::Probe {
    let mut out = core::Probe {
        initial_delay_seconds: p.initial_delay.as_ref().map(|n| n.v as i32),
        period_seconds: p.period.as_ref().map(|n| n.v as i32),
        timeout_seconds: p.timeout.as_ref().map(|n| n.v as i32),
        failure_threshold: p.failure_threshold.as_ref().map(|n| n.v as i32),
        ..core::Probe::default()
    };
    match &p.action {
        ProbeAction::Http { path, port: at } => {
            out.http_get = Some(core::HTTPGetAction {
                path: Some(path.v.clone()),
                port: port(at),
                http_headers: (!p.headers.is_empty()).then(|| {
                    p.headers
                        .iter()
                        .map(|(k, v)| core::HTTPHeader {
                            name: k.v.clone(),
                            value: v.v.clone(),
                        })
                        .collect()
                }),
                ..core::HTTPGetAction::default()
            })
        }
        ProbeAction::Tcp { port: at } => {
            out.tcp_socket = Some(core::TCPSocketAction {
                port: port(at),
                ..core::TCPSocketAction::default()
            })
        }
        ProbeAction::Exec { command } => {
            out.exec = Some(core::ExecAction {
                command: strings(command),
            })
        }
    }
    out
}

fn volume(v: &Volume) -> core::Volume {
    let mut out = core::Volume {
        name: v.name.v.clone(),
        ..core::Volume::default()
    };
    match &v.source {
        VolumeSource::ConfigMap(n) => {
            out.config_map = Some(core::ConfigMapVolumeSource {
                name: n.v.clone(),
                ..core::ConfigMapVolumeSource::default()
            })
        }
        VolumeSource::Secret(n) => {
            out.secret = Some(core::SecretVolumeSource {
                secret_name: Some(n.v.clone()),
                ..core::SecretVolumeSource::default()
            })
        }
        VolumeSource::Pvc(n) => {
            out.persistent_volume_claim = Some(core::PersistentVolumeClaimVolumeSource {
                claim_name: n.v.clone(),
                ..core::PersistentVolumeClaimVolumeSource::default()
            })
        }
        VolumeSource::EmptyDir { memory, size_limit } => {
            out.empty_dir = Some(core::EmptyDirVolumeSource {
                medium: memory.then(|| "Memory".to_string()),
                size_limit: size_limit.as_ref().map(|q| Quantity(q.v.clone())),
            })
        }
    }
    out
}

/// A PersistentVolumeClaim spec (for claims and claim templates).
pub(super) fn claim_spec(
    storage: &str,
    access: &[piceli_core::Spanned<String>],
    class: Option<&str>,
) -> core::PersistentVolumeClaimSpec {
    let modes = if access.is_empty() {
        vec!["ReadWriteOnce".to_string()]
    } else {
        access.iter().map(|a| a.v.clone()).collect()
    };
    core::PersistentVolumeClaimSpec {
        access_modes: Some(modes),
        storage_class_name: class.map(str::to_string),
        resources: Some(core::VolumeResourceRequirements {
            requests: Some(BTreeMap::from([(
                "storage".to_string(),
                Quantity(storage.to_string()),
            )])),
            ..core::VolumeResourceRequirements::default()
        }),
        ..core::PersistentVolumeClaimSpec::default()
    }
}

fn claim_template(cx: &Cx, c: &ClaimTemplate) -> core::PersistentVolumeClaim {
    core::PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(c.name.v.clone()),
            labels: Some(cx.base_labels()),
            ..ObjectMeta::default()
        },
        spec: Some(claim_spec(
            &c.storage.v,
            &c.access_modes,
            c.storage_class.as_ref().map(|s| s.v.as_str()),
        )),
        ..core::PersistentVolumeClaim::default()
    }
}
