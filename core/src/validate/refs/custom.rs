//! References inside custom resources (`resource` items): a table of which fields of a few well-known
//! kinds name objects of the app, walked over each object's fields and checked like the built-in
//! references (did-you-mean, the same codes where one fits).

use super::{Ctx, service, service_port};
use crate::codes::Code;
use crate::model::{App, BlockValue, CustomObject, ExternalKind, PortRef, Service};
use crate::rules::did_you_mean;
use crate::spanned::Name;

/// What the objects at a reference's path name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// A `BackendObjectReference`: a Service of the app (`kind`/`group` unset or `Service`/`""`) and
    /// one of its ports (`port`).
    ServiceBackend,
    /// A `ParentReference`: a Gateway `resource` of the app (and `sectionName` one of its listeners) or an
    /// `external gateway`, unless `namespace:` names another namespace's (someone else's).
    Gateway,
    /// A Secret the object makes (cert-manager writes the certificate there): workloads may mount it.
    MadeSecret,
    /// An `ObjectReference` to a cert-manager `Issuer` (a `resource` of the app) or `ClusterIssuer`.
    Issuer,
    /// A `ServiceMonitor`: its `selector` selects Services of the app, each `endpoints[].port` is a
    /// named port of one of them.
    MonitoredServices,
    /// A `PodMonitor`: its `selector` selects pods of the app's workloads, each
    /// `podMetricsEndpoints[].port` is a named container port of one of them.
    MonitoredPods,
}

/// One row of the table: in objects of `group`/`kind`, the values at `path` name [`Names`].
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    /// The API group (`gateway.networking.k8s.io`).
    pub group: &'static str,
    /// The kind (`HTTPRoute`).
    pub kind: &'static str,
    /// The field path; `[]` after a name walks each item of a list (`spec.rules[].backendRefs[]`).
    pub path: &'static str,
    /// What the value there names.
    pub names: Names,
}

const GATEWAY: &str = "gateway.networking.k8s.io";
const CERT_MANAGER: &str = "cert-manager.io";
const MONITORING: &str = "monitoring.coreos.com";

/// Every reference checked (docs/dsl.md lists them).
pub const REFERENCES: &[Reference] = &[
    Reference {
        group: GATEWAY,
        kind: "HTTPRoute",
        path: "spec.rules[].backendRefs[]",
        names: Names::ServiceBackend,
    },
    Reference {
        group: GATEWAY,
        kind: "HTTPRoute",
        path: "spec.parentRefs[]",
        names: Names::Gateway,
    },
    Reference {
        group: GATEWAY,
        kind: "GRPCRoute",
        path: "spec.rules[].backendRefs[]",
        names: Names::ServiceBackend,
    },
    Reference {
        group: GATEWAY,
        kind: "GRPCRoute",
        path: "spec.parentRefs[]",
        names: Names::Gateway,
    },
    Reference {
        group: CERT_MANAGER,
        kind: "Certificate",
        path: "spec.secretName",
        names: Names::MadeSecret,
    },
    Reference {
        group: CERT_MANAGER,
        kind: "Certificate",
        path: "spec.issuerRef",
        names: Names::Issuer,
    },
    Reference {
        group: MONITORING,
        kind: "ServiceMonitor",
        path: "spec",
        names: Names::MonitoredServices,
    },
    Reference {
        group: MONITORING,
        kind: "PodMonitor",
        path: "spec",
        names: Names::MonitoredPods,
    },
];

/// The group of an object's `apiVersion` (`gateway.networking.k8s.io/v1` → `gateway.networking.k8s.io`).
fn group_of(o: &CustomObject) -> &str {
    o.api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
}

/// The rows of the table that apply to `o`.
fn rows(o: &CustomObject) -> impl Iterator<Item = &'static Reference> + Clone + '_ {
    REFERENCES
        .iter()
        .filter(move |r| r.kind == o.kind && r.group == group_of(o))
}

/// The values at `path` in `o`'s fields (each item of a list marked `[]`).
pub fn at_path<'a>(o: &'a CustomObject, path: &str) -> Vec<&'a BlockValue> {
    let mut here: Vec<&BlockValue> = Vec::new();
    let mut segments = path.split('.');
    let Some(first) = segments.next() else {
        return here;
    };
    let (name, each) = split(first);
    if let Some(v) = o.fields.get(name) {
        here.push(v);
        if each {
            here = items(here);
        }
    }
    for seg in segments {
        let (name, each) = split(seg);
        here = here
            .into_iter()
            .filter_map(|v| match v {
                BlockValue::Map(m) => m.get(name),
                _ => None,
            })
            .collect();
        if each {
            here = items(here);
        }
    }
    here
}

fn split(seg: &str) -> (&str, bool) {
    match seg.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (seg, false),
    }
}

fn items(values: Vec<&BlockValue>) -> Vec<&BlockValue> {
    values
        .into_iter()
        .flat_map(|v| match v {
            BlockValue::List(_, items) => items.iter().collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// A string field of a map, as a name with its location.
fn string(v: &BlockValue, key: &str) -> Option<Name> {
    match v {
        BlockValue::Map(m) => match m.get(key) {
            Some(BlockValue::Str(s)) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a map sets `key` at all (to anything).
fn has(v: &BlockValue, key: &str) -> bool {
    matches!(v, BlockValue::Map(m) if m.get(key).is_some())
}

/// The Secrets the app's custom resources make (a cert-manager Certificate's `secretName`).
pub fn made_secrets(app: &App) -> impl Iterator<Item = &str> + Clone {
    app.resources.iter().flat_map(|o| {
        rows(o)
            .filter(|r| r.names == Names::MadeSecret)
            .flat_map(move |r| at_path(o, r.path))
            .filter_map(|v| match v {
                BlockValue::Str(s) => Some(s.v.as_str()),
                _ => None,
            })
    })
}

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for o in &app.resources {
        for r in rows(o) {
            for v in at_path(o, r.path) {
                match r.names {
                    Names::ServiceBackend => backend(cx, app, v),
                    Names::Gateway => parent(cx, app, o, v),
                    Names::MadeSecret => {}
                    Names::Issuer => issuer(cx, app, o, v),
                    Names::MonitoredServices => monitor::check(cx, app, o, v),
                    Names::MonitoredPods => pods::check(cx, app, o, v),
                }
            }
        }
    }
}

/// The names of the app's Gateway API Gateways (`resource Gateway NAME`).
pub(crate) fn gateways(app: &App) -> Vec<&str> {
    resources_of(app, GATEWAY, "Gateway")
}

/// The names of the app's `resource` objects of a kind.
fn resources_of<'a>(app: &'a App, group: &'a str, kind: &'a str) -> Vec<&'a str> {
    app.resources
        .iter()
        .filter(|o| o.kind == kind && group_of(o) == group)
        .map(|o| o.name.v.as_str())
        .collect()
}

/// An unset field or one of the given values.
fn unset_or(v: &BlockValue, key: &str, values: &[&str]) -> bool {
    match v {
        BlockValue::Map(m) => match m.get(key) {
            None => true,
            Some(BlockValue::Str(s)) => values.contains(&s.v.as_str()),
            Some(_) => false,
        },
        _ => false,
    }
}

/// `backendRefs[]`: a Service of the app and one of its ports.
fn backend(cx: &mut Ctx, app: &App, v: &BlockValue) {
    // Another kind of backend, or another namespace's Service (allowed by its ReferenceGrant): theirs.
    if !unset_or(v, "kind", &["Service"]) || !unset_or(v, "group", &["", "core"]) {
        return;
    }
    if has(v, "namespace") {
        return;
    }
    let Some(name) = string(v, "name") else {
        return;
    };
    if cx.known(&name).is_none() || app.is_external(ExternalKind::Service, &name.v) {
        return;
    }
    let Some(s) = service(cx, app, &name) else {
        return;
    };
    let BlockValue::Map(m) = v else { return };
    match m.get("port") {
        Some(BlockValue::Int(p)) if s.ports.is_empty() => {
            // Ports written in the Service's `spec: { ports }`: checked as an Ingress's are.
            service_port(cx, s, &PortRef::Number(p.clone()))
        }
        Some(BlockValue::Int(p)) => {
            if cx.known(p).is_some() && !s.ports.iter().any(|sp| sp.port.v == p.v) {
                cx.error(
                    Code::UnknownServicePort,
                    p.at,
                    format!("Service `{}` has no port {}", s.name.v, p.v),
                    format!(
                        "a backend names a Service port by number: use one of {}",
                        ports_of(s)
                    ),
                );
            }
        }
        Some(_) => {}
        None => cx.error(
            Code::UnknownServicePort,
            name.at,
            format!("the backend Service `{}` is given no port", name.v),
            format!(
                "the Gateway API requires one for a Service: add `port:` with one of {}",
                ports_of(s)
            ),
        ),
    }
}

/// `80` (`http`), `9090` (`metrics`): a Service's port numbers, with their names.
fn ports_of(s: &Service) -> String {
    if s.ports.is_empty() {
        return "its `spec: { ports }`".into();
    }
    s.ports
        .iter()
        .map(|p| match p.name.v.as_str() {
            "" => format!("`{}`", p.port.v),
            name => format!("`{}` (`{name}`)", p.port.v),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `parentRefs[]`: a Gateway of the app or an `external gateway`, unless it is another namespace's.
fn parent(cx: &mut Ctx, app: &App, o: &CustomObject, v: &BlockValue) {
    if !unset_or(v, "kind", &["Gateway"])
        || !unset_or(v, "group", &[GATEWAY])
        || has(v, "namespace")
    {
        return;
    }
    let Some(name) = string(v, "name") else {
        return;
    };
    let gateways = gateways(app);
    if gateways.contains(&name.v.as_str()) {
        return listener(cx, app, &name, v);
    }
    // Someone else's Gateway in the app's namespace: its listeners are theirs, so `sectionName` is not
    // checked; `plan` looks it up.
    let externals = crate::validate::pods::externals(app, ExternalKind::Gateway);
    if externals.clone().any(|n| n == name.v) {
        return;
    }
    let help = match did_you_mean(&name.v, gateways.iter().copied().chain(externals)) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "declare it (`resource Gateway {} {{ … }}`), say someone else makes it (`external gateway {};`), or name another namespace's Gateway: `{{ name: \"{}\", namespace: \"…\" }}`",
            name.v, name.v, name.v
        ),
    };
    cx.error(
        Code::UnknownCustomRef,
        name.at,
        format!(
            "{} attaches to no Gateway of the app named `{}`",
            o.what(),
            name.v
        ),
        help,
    );
}

/// A parentRef's `sectionName`: a listener of the app's Gateway it attaches to.
fn listener(cx: &mut Ctx, app: &App, gateway: &Name, v: &BlockValue) {
    let Some(section) = string(v, "sectionName").filter(|s| cx.known(s).is_some()) else {
        return;
    };
    let Some(g) = app
        .resources
        .iter()
        .find(|o| o.kind == "Gateway" && group_of(o) == GATEWAY && o.name.v == gateway.v)
    else {
        return;
    };
    let listeners: Vec<&str> = at_path(g, "spec.listeners[]")
        .into_iter()
        .filter_map(|l| match l {
            BlockValue::Map(m) => match m.get("name") {
                Some(BlockValue::Str(n)) => Some(n.v.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if listeners.contains(&section.v.as_str()) {
        return;
    }
    let help = match did_you_mean(&section.v, listeners.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("its listeners: {}", super::super::list(&listeners)),
    };
    cx.error(
        Code::UnknownCustomRef,
        section.at,
        format!(
            "Gateway `{}` has no listener named `{}`",
            gateway.v, section.v
        ),
        help,
    );
}

/// `issuerRef`: an `Issuer` of the app, or a `ClusterIssuer` (cluster-wide: the app's, or someone
/// else's). Issuers of other groups (external issuers) are theirs.
fn issuer(cx: &mut Ctx, app: &App, o: &CustomObject, v: &BlockValue) {
    if !unset_or(v, "group", &[CERT_MANAGER]) {
        return;
    }
    let kind = string(v, "kind");
    match kind.as_ref().map(|k| k.v.as_str()) {
        None | Some("Issuer") => {}
        Some("ClusterIssuer") => return,
        Some(_) => {
            if let Some(k) = kind.as_ref().filter(|k| cx.known(k).is_some()) {
                let kinds = ["Issuer", "ClusterIssuer"];
                let help = match did_you_mean(&k.v, kinds) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "cert-manager's issuers are `Issuer` (this namespace's) and `ClusterIssuer`; set `group:` for an external issuer".into(),
                };
                cx.error(
                    Code::InvalidValue,
                    k.at,
                    format!("`{}` is not a cert-manager issuer kind", k.v),
                    help,
                );
            }
            return;
        }
    }
    let Some(name) = string(v, "name") else {
        return;
    };
    let issuers = resources_of(app, CERT_MANAGER, "Issuer");
    if issuers.contains(&name.v.as_str()) {
        return;
    }
    let help = match did_you_mean(&name.v, issuers.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "declare it (`resource Issuer {} {{ … }}`), or use a cluster-wide one: `issuerRef: {{ name: \"{}\", kind: \"ClusterIssuer\" }}`",
            name.v, name.v
        ),
    };
    cx.error(
        Code::UnknownCustomRef,
        name.at,
        format!(
            "{} names no Issuer of the app called `{}`",
            o.what(),
            name.v
        ),
        help,
    );
}

#[path = "custom_monitor.rs"]
mod monitor;
pub use monitor::service_labels;

#[path = "custom_pods.rs"]
mod pods;
pub use pods::{pod_labels, pod_selector};

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
