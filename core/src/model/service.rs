//! Services, Ingresses and NetworkPolicies: how traffic reaches workloads.

use super::{Block, Labels, PortRef};
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// The type of a Service.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServiceType {
    /// Cluster-internal virtual IP.
    #[default]
    ClusterIp,
    /// A port on every node.
    NodePort,
    /// An external load balancer.
    LoadBalancer,
    /// No virtual IP (`clusterIP: None`), e.g. for StatefulSets.
    Headless,
}

/// A Service selecting one declared workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Service {
    /// Its name.
    pub name: Name,
    /// The workload whose pods it selects; empty for a Service of no workload (`service NAME { spec: { … }
    /// }`: ExternalName, its own selector, or none), whose spec is rendered as written.
    pub selects: Name,
    /// Its type.
    pub service_type: ServiceType,
    /// Its ports.
    pub ports: Vec<ServicePort>,
    /// A local port forward for `access` (and checks).
    pub access: Option<Access>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: ServiceSpec fields, merged under the DSL's.
    pub spec: Block,
}

/// A port of a Service's `spec: { ports }`: its name, if it has one, and its number.
pub type SpecPort<'a> = (Option<&'a Spanned<String>>, &'a Spanned<i64>);

impl Service {
    /// Whether it is a Service of no workload (`service NAME { spec: { … } }`, rendered as written).
    pub fn of_no_workload(&self) -> bool {
        self.selects.v.is_empty()
    }

    /// The selector written in `spec: { selector: { … } }`: used exactly as written.
    pub fn written_selector(&self) -> Option<Vec<(String, String)>> {
        self.spec.labels_at(&["selector"])
    }

    /// The ports written in `spec: { ports: [ … ] }`, `(name, port)`; `None` when there are none, or one
    /// is not a map with a literal `port` (a Rust expression).
    pub fn spec_ports(&self) -> Option<Vec<SpecPort<'_>>> {
        let Some(super::BlockValue::List(_, items)) = self.spec.get("ports") else {
            return None;
        };
        items
            .iter()
            .map(|i| {
                let super::BlockValue::Map(m) = i else {
                    return None;
                };
                let port = match m.get("port") {
                    Some(super::BlockValue::Int(n)) => n,
                    _ => return None,
                };
                let name = match m.get("name") {
                    Some(super::BlockValue::Str(n)) => Some(n),
                    None => None,
                    Some(_) => return None,
                };
                Some((name, port))
            })
            .collect()
    }
}

/// One Service port: `http: 80 => http`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServicePort {
    /// The Service port's name.
    pub name: Name,
    /// The port clients connect to.
    pub port: Spanned<i64>,
    /// The container port it forwards to (named, or a number).
    pub target: Option<PortRef>,
    /// A fixed node port (NodePort/LoadBalancer).
    pub node_port: Option<Spanned<i64>>,
}

/// A declared port forward: `access: forward(local: 18080, health: "/")`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Access {
    /// Local port on 127.0.0.1.
    pub local_port: Spanned<i64>,
    /// Which Service port (default: the first).
    pub port: Option<Name>,
    /// An HTTP path probed to tell the forward is healthy.
    pub health: Option<Spanned<String>>,
}

/// A NetworkPolicy allowing ingress to a workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkPolicy {
    /// Its name.
    pub name: Name,
    /// The workload it protects (`-> WORKLOAD`; empty in the selector form).
    pub applies_to: Name,
    /// The selector form (`pods:`, `ingress:`, `egress:`, `types:`), rendered as written instead of the
    /// workload form (`-> WORKLOAD`, `from:`, `ports:`).
    #[serde(default)]
    pub selector: Option<super::SelectorPolicy>,
    /// Workloads of this app that may connect.
    pub from_workloads: Vec<Name>,
    /// Namespaces whose pods may connect (by `kubernetes.io/metadata.name`).
    pub from_namespaces: Vec<Spanned<String>>,
    /// Container ports of the protected workload that are open (all when empty).
    pub ports: Vec<PortRef>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: NetworkPolicySpec fields, merged under the DSL's.
    pub spec: Block,
}

/// An Ingress routing hosts and paths to Services.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ingress {
    /// Its name.
    pub name: Name,
    /// The host it serves.
    pub host: Option<Spanned<String>>,
    /// IngressClass name.
    pub class: Option<Spanned<String>>,
    /// A declared Secret holding the TLS certificate, for every host (`tls: NAME`).
    pub tls_secret: Option<Name>,
    /// `tls: { SECRET: ["host", …], … }`: one TLS entry per Secret, for the hosts listed (none: the hosts
    /// the controller picks), in the order written.
    #[serde(default)]
    pub tls: Vec<IngressTls>,
    /// `default: SERVICE => PORT`: where requests no rule matches go (`spec.defaultBackend`).
    #[serde(default)]
    pub default_backend: Option<IngressBackend>,
    /// Path → backend.
    pub paths: Vec<IngressPath>,
    /// Annotations (controllers read them).
    pub annotations: Labels,
    /// Labels.
    pub labels: Labels,
    /// `spec: { … }`: IngressSpec fields, merged under the DSL's.
    pub spec: Block,
    /// `path_type:` of every path (`Prefix` when not given).
    pub path_type: Option<Spanned<String>>,
}

/// One Ingress path rule: `"/api": api => http`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngressPath {
    /// The path prefix.
    pub path: Spanned<String>,
    /// The declared Service.
    pub service: Name,
    /// The Service port, by name or number.
    pub port: Option<PortRef>,
    /// The host of its rule (`rules: { "host": { … } }`); `None` is the Ingress's `host:`.
    pub host: Option<Spanned<String>>,
    /// Its own path type (`"/healthz": exact(web => http)`); `None` is the Ingress's `path_type:`.
    #[serde(default)]
    pub path_type: Option<Spanned<String>>,
}

/// One TLS entry of an Ingress: `web-tls: ["shop.example.com"]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngressTls {
    /// A declared or `external` Secret with the certificate.
    pub secret: Name,
    /// The hosts it covers, in order (none: the field is left out).
    pub hosts: Vec<Spanned<String>>,
}

/// A Service backend of an Ingress outside its rules: `default: web => http`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngressBackend {
    /// The declared or `external` Service.
    pub service: Name,
    /// The Service port, by name or number (`None`: the Service's first).
    pub port: Option<PortRef>,
}
