//! Unit tests of the whole-app validation (each rule on its own is tested in `rules/`).

use super::validate;
use crate::codes::Code;
use crate::model::*;
use crate::spanned::{Loc, Spanned};

fn s(v: &str, at: u32) -> Spanned<String> {
    Spanned::new(v.to_string(), Loc(at))
}

const IMAGE: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

fn app() -> App {
    App {
        name: s("hello", 0),
        workloads: vec![Workload {
            name: s("web", 1),
            replicas: Some(Spanned::new(2, Loc(2))),
            containers: vec![Container {
                name: s("web", 3),
                image: s(IMAGE, 4),
                ports: vec![ContainerPort {
                    name: s("http", 5),
                    number: Spanned::new(80, Loc(6)),
                    protocol: None,
                }],
                ..Container::default()
            }],
            ..Workload::default()
        }],
        services: vec![Service {
            name: s("web", 7),
            selects: s("web", 8),
            ports: vec![ServicePort {
                name: s("http", 9),
                port: Spanned::new(80, Loc(10)),
                target: Some(PortRef::Name(s("http", 11))),
                node_port: None,
            }],
            ..Service::default()
        }],
        ..App::default()
    }
}

fn codes(app: &App) -> Vec<(Code, u32)> {
    validate(app)
        .into_iter()
        .map(|d| (d.code, d.at.0))
        .collect()
}

#[test]
fn a_good_app_passes() {
    assert_eq!(codes(&app()), vec![]);
}

#[test]
fn service_must_select_a_declared_workload_and_port() {
    let mut a = app();
    a.services[0].selects = s("wbe", 8);
    let d = validate(&a);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].code, d[0].at), (Code::UnknownWorkload, Loc(8)));
    assert!(d[0].help.contains("did you mean `web`"), "{}", d[0].help);
    let mut a = app();
    a.services[0].ports[0].target = Some(PortRef::Name(s("htp", 11)));
    assert_eq!(codes(&a), vec![(Code::UnknownTargetPort, 11)]);
}

#[test]
fn unpinned_image_needs_opt_out() {
    let mut a = app();
    a.workloads[0].containers[0].image = s("nginx:1.27", 4);
    assert_eq!(codes(&a), vec![(Code::ImageNotPinned, 4)]);
    a.workloads[0].containers[0].unpinned = true;
    assert_eq!(codes(&a), vec![]);
}

#[test]
fn dynamic_values_are_skipped_until_known() {
    let mut a = app();
    a.workloads[0].containers[0].image = s("", 4);
    assert_eq!(codes(&a), vec![(Code::InvalidImage, 4)]);
    a.dynamic.push(Loc(4));
    assert_eq!(codes(&a), vec![]);
}

#[test]
fn requests_above_limits_and_milli_memory() {
    let mut a = app();
    let r = &mut a.workloads[0].containers[0].resources;
    r.requests = vec![
        (s("cpu", 20), s("500m", 21)),
        (s("memory", 22), s("512m", 23)),
    ];
    r.limits = vec![(s("cpu", 24), s("250m", 25))];
    assert_eq!(
        codes(&a),
        vec![(Code::RequestAboveLimit, 21), (Code::MilliMemory, 23)]
    );
}

#[test]
fn probes_must_use_exposed_ports() {
    let mut a = app();
    a.workloads[0].containers[0].readiness = Some(Probe {
        action: ProbeAction::Http {
            path: s("/", 30),
            port: PortRef::Name(s("admin", 31)),
        },
        ..Probe::default()
    });
    assert_eq!(codes(&a), vec![(Code::ProbePortNotExposed, 31)]);
}

#[test]
fn duplicates_are_reported_at_the_second() {
    let mut a = app();
    let w = a.workloads[0].clone();
    a.workloads.push(Workload {
        name: s("web", 40),
        ..w
    });
    assert_eq!(codes(&a), vec![(Code::DuplicateObject, 40)]);
}

#[test]
fn overrides_must_name_workloads_and_fields() {
    let mut a = app();
    a.targets.push(Target {
        name: s("prod", 50),
        namespace: s("shop", 51),
        overrides: vec![
            Override {
                object: s("wb", 52),
                field: s("replicas", 52),
                value: OverrideValue::Int(Spanned::new(3, Loc(53))),
            },
            Override {
                object: s("web", 54),
                field: s("replica", 54),
                value: OverrideValue::Int(Spanned::new(3, Loc(55))),
            },
            Override {
                object: s("web", 56),
                field: s("image", 56),
                value: OverrideValue::Str(s("nginx", 57)),
            },
        ],
        ..Target::default()
    });
    assert_eq!(
        codes(&a),
        vec![
            (Code::UnknownOverride, 52),
            (Code::UnknownOverride, 54),
            (Code::ImageNotPinned, 57)
        ]
    );
}

#[test]
fn env_references_need_declared_keys() {
    let mut a = app();
    a.secrets.push(Secret {
        name: s("api", 60),
        data: vec![(s("key", 61), SecretSource::Env(s("API_KEY", 62)))],
        ..Secret::default()
    });
    a.workloads[0].containers[0].env = vec![
        EnvVar {
            name: s("A", 63),
            value: EnvValue::SecretKey {
                secret: s("api", 64),
                key: s("token", 65),
            },
        },
        EnvVar {
            name: s("A", 66),
            value: EnvValue::Literal(s("x", 67)),
        },
    ];
    assert_eq!(
        codes(&a),
        vec![(Code::UnknownConfigRef, 65), (Code::DuplicateEnv, 66)]
    );
}

#[test]
fn references_to_external_objects_check_by_name_only() {
    let mut a = app();
    a.externals = vec![
        External {
            kind: ExternalKind::Secret,
            name: s("tls", 70),
        },
        External {
            kind: ExternalKind::ServiceAccount,
            name: s("platform", 71),
        },
        External {
            kind: ExternalKind::Pvc,
            name: s("shared", 72),
        },
        External {
            kind: ExternalKind::ConfigMap,
            name: s("ca", 73),
        },
    ];
    let w = &mut a.workloads[0];
    w.service_account = Some(s("platform", 74));
    w.volumes = vec![
        Volume {
            name: s("certs", 75),
            source: VolumeSource::Secret(s("tls", 76)),
        },
        Volume {
            name: s("data", 77),
            source: VolumeSource::Pvc(s("shared", 78)),
        },
    ];
    w.containers[0].env_from = vec![EnvFrom::ConfigMap(s("ca", 79))];
    w.containers[0].env = vec![EnvVar {
        name: s("KEY", 80),
        // Any key of an object someone else makes: its keys are theirs.
        value: EnvValue::SecretKey {
            secret: s("tls", 81),
            key: s("tls.key", 82),
        },
    }];
    assert_eq!(codes(&a), vec![]);
    // A Secret that is external is still not a ConfigMap.
    a.workloads[0].containers[0].env_from = vec![EnvFrom::ConfigMap(s("tls", 83))];
    assert_eq!(codes(&a), vec![(Code::UnknownConfigRef, 83)]);
}

#[test]
fn an_external_object_is_declared_once_and_not_by_the_app() {
    let mut a = app();
    a.secrets.push(Secret {
        name: s("api", 60),
        data: vec![(s("key", 61), SecretSource::Env(s("API_KEY", 62)))],
        ..Secret::default()
    });
    a.externals = vec![
        External {
            kind: ExternalKind::Secret,
            name: s("api", 70),
        },
        External {
            kind: ExternalKind::ConfigMap,
            name: s("ca", 71),
        },
        External {
            kind: ExternalKind::ConfigMap,
            name: s("ca", 72),
        },
        External {
            kind: ExternalKind::Pvc,
            name: s("Bad_Name", 73),
        },
    ];
    assert_eq!(
        codes(&a),
        vec![
            (Code::ExternalConflict, 70),
            (Code::ExternalConflict, 72),
            (Code::InvalidName, 73)
        ]
    );
}
