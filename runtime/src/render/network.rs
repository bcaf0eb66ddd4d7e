//! Services, Ingresses and NetworkPolicies.

use super::Sink;
use super::meta::Cx;
use super::{json, merge_block};
use crate::error::Error;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::networking::v1 as net;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use piceli_core::model::{PortRef, ServiceType};
use piceli_core::schema;
use std::collections::BTreeMap;

fn int_or_string(p: &PortRef) -> IntOrString {
    match p {
        PortRef::Name(n) => IntOrString::String(n.v.clone()),
        PortRef::Number(n) => IntOrString::Int(n.v as i32),
    }
}

/// The arrow form's ingress rules: one rule for the peers and ports it names (no `from:` is every peer, no
/// `ports:` every port, as in a Kubernetes rule), and none at all when it names neither — `{}` denies all
/// ingress to the workload. (A rule `{}` would allow every peer on every port.)
fn ingress_rules(
    peers: Vec<net::NetworkPolicyPeer>,
    ports: Option<Vec<net::NetworkPolicyPort>>,
) -> Vec<net::NetworkPolicyIngressRule> {
    if peers.is_empty() && ports.is_none() {
        return Vec::new();
    }
    vec![net::NetworkPolicyIngressRule {
        from: (!peers.is_empty()).then_some(peers),
        ports,
    }]
}

pub(super) fn services(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for s in &cx.app.services {
        let (type_, cluster_ip) = match s.service_type {
            ServiceType::ClusterIp => (None, None),
            ServiceType::NodePort => (Some("NodePort".to_string()), None),
            ServiceType::LoadBalancer => (Some("LoadBalancer".to_string()), None),
            ServiceType::Headless => (None, Some("None".to_string())),
        };
        let ports = s
            .ports
            .iter()
            .map(|p| core::ServicePort {
                // `port: 80 => 8080`: no name, as written.
                name: (!p.name.v.is_empty()).then(|| p.name.v.clone()),
                port: p.port.v as i32,
                target_port: p.target.as_ref().map(int_or_string),
                node_port: p.node_port.as_ref().map(|n| n.v as i32),
                ..core::ServicePort::default()
            })
            .collect();
        let mut object = json(
            "Service",
            &core::Service {
                metadata: cx.meta(&s.name.v, &s.labels, &s.annotations),
                // A Service of no workload is its `spec:` as written (no selector of Piceli's).
                spec: Some(core::ServiceSpec {
                    // A selector written in `spec:` is used exactly as written.
                    selector: (!s.of_no_workload()).then(|| match s.written_selector() {
                        Some(own) => own.into_iter().collect(),
                        None => cx.selector(&s.selects.v),
                    }),
                    ports: (!s.of_no_workload()).then_some(ports),
                    type_,
                    cluster_ip,
                    ..core::ServiceSpec::default()
                }),
                ..core::Service::default()
            },
        )?;
        merge_block(&mut object, &["spec"], &s.spec, schema::SERVICE_SPEC);
        out.push(object);
    }
    Ok(())
}

pub(super) fn routing(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for i in &cx.app.ingresses {
        let path_type = i
            .path_type
            .as_ref()
            .map(|t| t.v.clone())
            .unwrap_or_else(|| "Prefix".to_string());
        let service_backend = |service: &str, port: Option<&PortRef>| {
            // The port as written (also to an `external service`), else the declared Service's first.
            let port = match port {
                Some(PortRef::Name(n)) => Some(net::ServiceBackendPort {
                    name: Some(n.v.clone()),
                    number: None,
                }),
                Some(PortRef::Number(n)) => Some(net::ServiceBackendPort {
                    name: None,
                    number: Some(n.v as i32),
                }),
                None => cx.app.service(service).and_then(|s| {
                    // Its first port (of `spec: { ports }` when it has no first-class ones).
                    s.ports
                        .first()
                        .map(|sp| sp.port.v)
                        .or_else(|| s.spec_ports()?.first().map(|(_, p)| p.v))
                        .map(|n| net::ServiceBackendPort {
                            name: None,
                            number: Some(n as i32),
                        })
                }),
            };
            net::IngressBackend {
                service: Some(net::IngressServiceBackend {
                    name: service.to_string(),
                    port,
                }),
                ..net::IngressBackend::default()
            }
        };
        let backend = |p: &piceli_core::model::IngressPath| net::HTTPIngressPath {
            path: Some(p.path.v.clone()),
            path_type: p
                .path_type
                .as_ref()
                .map_or_else(|| path_type.clone(), |t| t.v.clone()),
            backend: service_backend(&p.service.v, p.port.as_ref()),
        };
        // One rule per host, in the order hosts first appear; `None` is the Ingress's `host:`.
        let mut rules: Vec<net::IngressRule> = Vec::new();
        for p in &i.paths {
            let host = p.host.as_ref().or(i.host.as_ref()).map(|h| h.v.clone());
            let path = backend(p);
            match rules.iter_mut().find(|r| r.host == host) {
                Some(r) => {
                    if let Some(http) = r.http.as_mut() {
                        http.paths.push(path);
                    }
                }
                None => rules.push(net::IngressRule {
                    host,
                    http: Some(net::HTTPIngressRuleValue { paths: vec![path] }),
                }),
            }
        }
        let hosts: Vec<String> = rules.iter().filter_map(|r| r.host.clone()).collect();
        let tls = match &i.tls_secret {
            Some(t) => Some(vec![net::IngressTLS {
                hosts: (!hosts.is_empty()).then_some(hosts),
                secret_name: Some(t.v.clone()),
            }]),
            None if !i.tls.is_empty() => Some(
                i.tls
                    .iter()
                    .map(|t| net::IngressTLS {
                        hosts: (!t.hosts.is_empty())
                            .then(|| t.hosts.iter().map(|h| h.v.clone()).collect()),
                        secret_name: Some(t.secret.v.clone()),
                    })
                    .collect(),
            ),
            None => None,
        };
        let mut object = json(
            "Ingress",
            &net::Ingress {
                metadata: cx.meta(&i.name.v, &i.labels, &i.annotations),
                spec: Some(net::IngressSpec {
                    ingress_class_name: i.class.as_ref().map(|c| c.v.clone()),
                    // An Ingress of a default backend alone has no rules.
                    rules: (!rules.is_empty()).then_some(rules),
                    tls,
                    default_backend: i
                        .default_backend
                        .as_ref()
                        .map(|d| service_backend(&d.service.v, d.port.as_ref())),
                }),
                ..net::Ingress::default()
            },
        )?;
        merge_block(&mut object, &["spec"], &i.spec, schema::INGRESS_SPEC);
        out.push(object);
    }
    for n in &cx.app.network_policies {
        if let Some(p) = &n.selector {
            out.push(super::netpol::selector_policy(cx, n, p)?);
            continue;
        }
        let mut peers: Vec<net::NetworkPolicyPeer> = n
            .from_workloads
            .iter()
            .map(|w| net::NetworkPolicyPeer {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(cx.selector(&w.v)),
                    ..LabelSelector::default()
                }),
                ..net::NetworkPolicyPeer::default()
            })
            .collect();
        peers.extend(n.from_namespaces.iter().map(|ns| net::NetworkPolicyPeer {
            namespace_selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    "kubernetes.io/metadata.name".to_string(),
                    ns.v.clone(),
                )])),
                ..LabelSelector::default()
            }),
            ..net::NetworkPolicyPeer::default()
        }));
        let ports = (!n.ports.is_empty()).then(|| {
            n.ports
                .iter()
                .map(|p| net::NetworkPolicyPort {
                    port: Some(int_or_string(p)),
                    ..net::NetworkPolicyPort::default()
                })
                .collect()
        });
        let mut object = json(
            "NetworkPolicy",
            &net::NetworkPolicy {
                metadata: cx.meta(&n.name.v, &n.labels, &n.annotations),
                spec: Some(net::NetworkPolicySpec {
                    pod_selector: Some(LabelSelector {
                        match_labels: Some(cx.selector(&n.applies_to.v)),
                        ..LabelSelector::default()
                    }),
                    policy_types: Some(vec!["Ingress".to_string()]),
                    ingress: Some(ingress_rules(peers, ports)),
                    ..net::NetworkPolicySpec::default()
                }),
            },
        )?;
        merge_block(&mut object, &["spec"], &n.spec, schema::NETWORK_POLICY_SPEC);
        out.push(object);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_naming_no_peer_and_no_port_denies_all_ingress() {
        assert!(ingress_rules(Vec::new(), None).is_empty());
    }

    #[test]
    fn a_policy_naming_only_ports_opens_them_to_every_peer() {
        let port = net::NetworkPolicyPort {
            port: Some(IntOrString::String("http".into())),
            ..net::NetworkPolicyPort::default()
        };
        let rules = ingress_rules(Vec::new(), Some(vec![port.clone()]));
        assert_eq!(
            rules,
            [net::NetworkPolicyIngressRule {
                from: None,
                ports: Some(vec![port])
            }]
        );
    }
}
