//! NetworkPolicies in the selector form: the team's pod selector, peers and ports as written (no Piceli
//! labels in the selectors), merged over the `spec:` block.

use super::meta::Cx;
use super::{json, merge_block};
use crate::error::Error;
use k8s_openapi::api::networking::v1 as net;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use piceli_core::model::{Labels, NetworkPolicy, PolicyPeer, PortRef, SelectorPolicy, TrafficRule};
use piceli_core::schema;
use serde_json::Value;

/// `matchLabels` of these labels; none is `{}` (everything).
fn selector(labels: &Labels) -> LabelSelector {
    LabelSelector {
        match_labels: (!labels.is_empty()).then(|| {
            labels
                .iter()
                .map(|(k, v)| (k.v.clone(), v.v.clone()))
                .collect()
        }),
        ..LabelSelector::default()
    }
}

fn peer(p: &PolicyPeer) -> net::NetworkPolicyPeer {
    match p {
        PolicyPeer::Pods { pods, namespaces } => net::NetworkPolicyPeer {
            pod_selector: Some(selector(pods)),
            namespace_selector: namespaces.as_ref().map(selector),
            ..net::NetworkPolicyPeer::default()
        },
        PolicyPeer::Namespaces(ns) => net::NetworkPolicyPeer {
            namespace_selector: Some(selector(ns)),
            ..net::NetworkPolicyPeer::default()
        },
        PolicyPeer::Cidr { cidr, except } => net::NetworkPolicyPeer {
            ip_block: Some(net::IPBlock {
                cidr: cidr.v.clone(),
                except: (!except.is_empty()).then(|| except.iter().map(|e| e.v.clone()).collect()),
            }),
            ..net::NetworkPolicyPeer::default()
        },
    }
}

/// `(peers, ports)` of a rule, each `None` when empty (any).
fn parts(
    r: &TrafficRule,
) -> (
    Option<Vec<net::NetworkPolicyPeer>>,
    Option<Vec<net::NetworkPolicyPort>>,
) {
    let peers = (!r.peers.is_empty()).then(|| r.peers.iter().map(peer).collect());
    let ports = (!r.ports.is_empty()).then(|| {
        r.ports
            .iter()
            .map(|p| net::NetworkPolicyPort {
                port: p.port.as_ref().map(|p| match p {
                    PortRef::Name(n) => IntOrString::String(n.v.clone()),
                    PortRef::Number(n) => IntOrString::Int(n.v as i32),
                }),
                end_port: p.end.as_ref().map(|e| e.v as i32),
                protocol: p.protocol.as_ref().map(|s| s.v.clone()),
            })
            .collect()
    });
    (peers, ports)
}

/// The NetworkPolicy object of a policy in the selector form.
pub(super) fn selector_policy(
    cx: &Cx,
    n: &NetworkPolicy,
    p: &SelectorPolicy,
) -> Result<Value, Error> {
    let ingress = p.ingress.as_ref().map(|rules| {
        rules
            .iter()
            .map(|r| {
                let (from, ports) = parts(r);
                net::NetworkPolicyIngressRule { from, ports }
            })
            .collect()
    });
    let egress = p.egress.as_ref().map(|rules| {
        rules
            .iter()
            .map(|r| {
                let (to, ports) = parts(r);
                net::NetworkPolicyEgressRule { to, ports }
            })
            .collect()
    });
    let mut object = json(
        "NetworkPolicy",
        &net::NetworkPolicy {
            metadata: cx.meta(&n.name.v, &n.labels, &n.annotations),
            spec: Some(net::NetworkPolicySpec {
                pod_selector: Some(selector(&p.pods)),
                policy_types: (!p.types.is_empty())
                    .then(|| p.types.iter().map(|t| t.v.clone()).collect()),
                ingress,
                egress,
            }),
        },
    )?;
    merge_block(&mut object, &["spec"], &n.spec, schema::NETWORK_POLICY_SPEC);
    Ok(object)
}
