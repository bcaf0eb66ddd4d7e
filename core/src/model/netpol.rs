//! NetworkPolicies written with plain label selectors (`network_policy NAME { pods: {…}, ingress: […] }`):
//! the team's own labels, peers and ports, rendered as written.

use super::{Labels, PortRef};
use crate::spanned::Spanned;
use serde::{Deserialize, Serialize};

/// The selector form of a NetworkPolicy: which pods it applies to, and the traffic it allows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SelectorPolicy {
    /// `pods: { app: "web" }`: `podSelector.matchLabels` (empty: every pod of the namespace).
    pub pods: Labels,
    /// `types: ["Ingress", "Egress"]`: `policyTypes` as written (none: the API's default).
    pub types: Vec<Spanned<String>>,
    /// `ingress: [ … ]`: the allowed incoming traffic (`None`: not given; empty: none allowed).
    pub ingress: Option<Vec<TrafficRule>>,
    /// `egress: [ … ]`: the allowed outgoing traffic.
    pub egress: Option<Vec<TrafficRule>>,
}

/// One rule: `{ from: [ … ], ports: [ … ] }` (`to:` for egress); no peers or no ports means any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrafficRule {
    /// `from:` / `to:`.
    pub peers: Vec<PolicyPeer>,
    /// `ports:`.
    pub ports: Vec<PolicyPort>,
}

/// A peer of a rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PolicyPeer {
    /// `pods({ role: "frontend" })`, or `pods({ … }, namespaces: { … })` for pods in other namespaces.
    Pods {
        /// `podSelector.matchLabels`.
        pods: Labels,
        /// `namespaceSelector.matchLabels`, when given.
        namespaces: Option<Labels>,
    },
    /// `namespaces({ team: "ops" })`: every pod of the namespaces with these labels.
    Namespaces(Labels),
    /// `cidr("10.0.0.0/8", except: ["10.1.0.0/16"])`: an `ipBlock`.
    Cidr {
        /// The block.
        cidr: Spanned<String>,
        /// Ranges inside it left out.
        except: Vec<Spanned<String>>,
    },
}

/// A port of a rule: `80`, `http` (a named port), `port(53, protocol: "UDP")`, `port(8000, end: 8080)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyPort {
    /// The port, by number or name.
    pub port: Option<PortRef>,
    /// The last port of a range starting at `port`.
    pub end: Option<Spanned<i64>>,
    /// `TCP` (default), `UDP` or `SCTP`.
    pub protocol: Option<Spanned<String>>,
}
