//! Lowering the selector form of `network_policy NAME { pods: {…}, types: […], ingress: […], egress: […] }`:
//! plain label selectors, `pods(…)`/`namespaces(…)`/`cidr(…)` peers and ports, rendered as written.

use super::blocks::NETWORK_POLICY_SELECTOR_OWNED;
use super::keys::{self, Key, Reading, annotations, labels};
use super::network::NETWORK_POLICY;
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;

/// `network_policy NAME { pods: { … }, … }`, the selector form: its keys and their readers.
pub const NETWORK_POLICY_SELECTOR: &[Key<Reading<Selector>>] = &[
    Key::new(
        "pods",
        "the pods it applies to, by labels (`podSelector.matchLabels`); `{}` is every pod",
        Some(|lw, r, f, key, v| match v {
            Some(v) => r.item.policy.pods = lw.labels(v, &format!("{} › {key}", r.owner)),
            None => {
                let sp = form_keys()
                    .find_map(|k| f.key(k))
                    .map(|k| k.sp)
                    .or(r.item.keyword);
                if let Some(sp) = sp {
                    lw.fail(
                        Code::NetworkPolicyForm,
                        sp,
                        format!("{} does not say which pods it applies to", r.owner),
                        "add `pods: { app: \"web\" }` (`pods: {}` for every pod of the namespace)",
                    );
                }
                r.item.mixed = true;
            }
        }),
    ),
    Key::new(
        "types",
        "`policyTypes`: `[\"Ingress\"]`, `[\"Egress\"]` or both",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.policy.types = lw.str_list(v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "ingress",
        "rules `[{ from: [peers], ports: [ports] }]`; peers are `pods(…)`, `namespaces(…)`, `cidr(…, except: […])`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.policy.ingress = Some(rules(lw, v, &format!("{} › {key}", r.owner), "from"));
            }
        }),
    ),
    Key::new(
        "egress",
        "rules `[{ to: [peers], ports: [ports] }]`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.policy.egress = Some(rules(lw, v, &format!("{} › {key}", r.owner), "to"));
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of NetworkPolicySpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let (root, owned) = (schema::NETWORK_POLICY_SPEC, NETWORK_POLICY_SELECTOR_OWNED);
                r.item.spec = lw.block_of(v, f, key, root, owned, &r.owner);
            }
        }),
    ),
];

/// The keys only the selector form has (`pods`, `types`, `ingress`, `egress`): one of them makes a policy
/// of that form.
pub(super) fn form_keys() -> impl Iterator<Item = &'static str> {
    NETWORK_POLICY_SELECTOR
        .iter()
        .map(|k| k.name)
        .filter(|k| keys::find(NETWORK_POLICY, k).is_none())
}

/// A selector-form policy being read.
#[derive(Default)]
pub struct Selector {
    policy: SelectorPolicy,
    spec: Block,
    /// Whether it mixes the two forms (or names no pods): reported once, and the policy left out.
    mixed: bool,
    /// The item's keyword, where a missing `pods:` is reported when no key of the form is given.
    keyword: Option<Sp>,
}

/// The selector form of a policy whose body has one of its [`form_keys`]; `None` after reporting a mix
/// of the two forms (PCL0083).
pub(super) fn selector_form(
    lw: &mut Lower,
    item: &Item,
    mut f: Fields,
    owner: &str,
) -> Option<NetworkPolicy> {
    let mut r = Reading::<Selector>::new(owner.to_string());
    r.item.keyword = Some(item.keyword.sp);
    if let Some(arrow) = &item.arrow {
        lw.fail(
            Code::NetworkPolicyForm,
            arrow.sp,
            format!("{owner} selects its pods with `pods:`, so it takes no `-> WORKLOAD`"),
            "remove `-> …`, or write the workload form (`from:`, `ports:`) without `pods:`",
        );
        r.item.mixed = true;
    }
    // The keys only the workload form has.
    let workload_form = NETWORK_POLICY
        .iter()
        .map(|k| k.name)
        .filter(|k| keys::find(NETWORK_POLICY_SELECTOR, k).is_none());
    for key in workload_form {
        if let Some(k) = f.key(key) {
            lw.fail(
                Code::NetworkPolicyForm,
                k.sp,
                format!("`{key}:` belongs to the workload form (`-> WORKLOAD`), not to `pods:`"),
                "write the traffic as `ingress: [{ from: [pods({ … })], ports: [80] }]`",
            );
            f.take(key);
            r.item.mixed = true;
        }
    }
    keys::read(lw, &mut f, NETWORK_POLICY_SELECTOR, &mut r);
    f.finish_keys(lw, NETWORK_POLICY_SELECTOR);
    (!r.item.mixed).then(|| NetworkPolicy {
        selector: Some(r.item.policy),
        labels: r.labels,
        annotations: r.annotations,
        spec: r.item.spec,
        ..NetworkPolicy::default()
    })
}

fn list(v: &Value) -> Vec<&Value> {
    match v {
        Value::List(items, _) => items.iter().collect(),
        other => vec![other],
    }
}

/// `[{ from: [ … ], ports: [ … ] }, …]` (`to:` for egress).
fn rules(lw: &mut Lower, v: &Value, desc: &str, peers_key: &str) -> Vec<TrafficRule> {
    let Value::List(items, _) = v else {
        lw.wrong_type(
            v,
            "a list of rules `[{ … }]`",
            "[{ from: [pods({ role: \"frontend\" })] }]",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let d = format!("{desc} › rule {}", i + 1);
        let mut f = Fields::of(lw, Some(item), d.clone());
        let mut r = TrafficRule::default();
        if let Some(v) = f.take(peers_key) {
            for p in list(v) {
                if let Some(peer) = peer(lw, p, &d) {
                    r.peers.push(peer);
                }
            }
        }
        if let Some(v) = f.take("ports") {
            for p in list(v) {
                if let Some(port) = port(lw, p, &d) {
                    r.ports.push(port);
                }
            }
        }
        f.finish(lw, &[peers_key, "ports"]);
        out.push(r);
    }
    out
}

/// `pods({ … })`, `pods({ … }, namespaces: { … })`, `namespaces({ … })`, `cidr("…", except: [ … ])`.
fn peer(lw: &mut Lower, v: &Value, desc: &str) -> Option<PolicyPeer> {
    let call = lw.call(
        v,
        &["pods", "namespaces", "cidr"],
        "pods({ role: \"frontend\" })",
    )?;
    let d = format!("{desc} › {}", call.name.text);
    let mut nf = lw.named(call, &d);
    let peer = match call.name.text.as_str() {
        "pods" => {
            lw.max_args(
                call,
                1,
                "pods({ role: \"frontend\" }, namespaces: { team: \"ops\" })",
            );
            let pods = lw.arg(call, 0, "the pods' labels", "pods({ role: \"frontend\" })")?;
            let pods = lw.labels(pods, &d);
            let namespaces = nf
                .take("namespaces")
                .map(|n| lw.labels(n, &format!("{d} › namespaces")));
            nf.finish(lw, &["namespaces"]);
            PolicyPeer::Pods { pods, namespaces }
        }
        "namespaces" => {
            lw.max_args(call, 1, "namespaces({ team: \"ops\" })");
            let ns = lw.arg(
                call,
                0,
                "the namespaces' labels",
                "namespaces({ team: \"ops\" })",
            )?;
            let ns = lw.labels(ns, &d);
            nf.finish(lw, &[]);
            PolicyPeer::Namespaces(ns)
        }
        _ => {
            lw.max_args(call, 1, "cidr(\"10.0.0.0/8\")");
            let cidr = lw.arg(call, 0, "the block", "cidr(\"10.0.0.0/8\")")?;
            let cidr = lw.str(cidr, d.clone())?;
            let except = nf
                .take("except")
                .map(|e| lw.str_list(e, &format!("{d} › except")))
                .unwrap_or_default();
            nf.finish(lw, &["except"]);
            PolicyPeer::Cidr { cidr, except }
        }
    };
    Some(peer)
}

/// `80`, `http`, `port(53, protocol: "UDP")`, `port(8000, end: 8080)`.
fn port(lw: &mut Lower, v: &Value, desc: &str) -> Option<PolicyPort> {
    let d = format!("{desc} › port");
    let Value::Call(_) = v else {
        return lw.port_ref(v, &d).map(|p| PolicyPort {
            port: Some(p),
            ..PolicyPort::default()
        });
    };
    let call = lw.call(v, &["port"], "port(53, protocol: \"UDP\")")?;
    lw.max_args(call, 1, "port(53, protocol: \"UDP\")");
    let mut nf = lw.named(call, &d);
    let port = match call.args.first() {
        Some(a) => Some(lw.port_ref(a, &d)?),
        None => None,
    };
    let end = nf.take("end").and_then(|e| lw.int(e, format!("{d} › end")));
    let protocol = nf
        .take("protocol")
        .and_then(|p| lw.str(p, format!("{d} › protocol")));
    nf.finish(lw, &["end", "protocol"]);
    Some(PolicyPort {
        port,
        end,
        protocol,
    })
}
