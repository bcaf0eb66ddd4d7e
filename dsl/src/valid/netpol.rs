//! Lowering the selector form of `network_policy NAME { pods: {…}, types: […], ingress: […], egress: […] }`:
//! plain label selectors, `pods(…)`/`namespaces(…)`/`cidr(…)` peers and ports, rendered as written.

use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;

/// The keys of the selector form (the workload form has `-> WORKLOAD`, `from:`, `ports:`).
pub(super) const SELECTOR_KEYS: &[&str] = &["pods", "types", "ingress", "egress"];

/// The selector form of a policy whose body has one of [`SELECTOR_KEYS`]; `None` after reporting a mix
/// of the two forms (PCL0083).
pub(super) fn selector_form(
    lw: &mut Lower,
    item: &Item,
    f: &mut Fields,
    owner: &str,
) -> Option<SelectorPolicy> {
    let mut mixed = false;
    if let Some(arrow) = &item.arrow {
        lw.fail(
            Code::NetworkPolicyForm,
            arrow.sp,
            format!("{owner} selects its pods with `pods:`, so it takes no `-> WORKLOAD`"),
            "remove `-> …`, or write the workload form (`from:`, `ports:`) without `pods:`",
        );
        mixed = true;
    }
    for key in ["from", "ports"] {
        if let Some(k) = f.key(key) {
            lw.fail(
                Code::NetworkPolicyForm,
                k.sp,
                format!("`{key}:` belongs to the workload form (`-> WORKLOAD`), not to `pods:`"),
                "write the traffic as `ingress: [{ from: [pods({ … })], ports: [80] }]`",
            );
            f.take(key);
            mixed = true;
        }
    }
    let pods = match f.take("pods") {
        Some(v) => lw.labels(v, &format!("{owner} › pods")),
        None => {
            let sp = SELECTOR_KEYS
                .iter()
                .find_map(|k| f.key(k))
                .map(|k| k.sp)
                .unwrap_or(item.keyword.sp);
            lw.fail(
                Code::NetworkPolicyForm,
                sp,
                format!("{owner} does not say which pods it applies to"),
                "add `pods: { app: \"web\" }` (`pods: {}` for every pod of the namespace)",
            );
            mixed = true;
            Vec::new()
        }
    };
    let types = f
        .take("types")
        .map(|v| lw.str_list(v, &format!("{owner} › types")))
        .unwrap_or_default();
    let ingress = f
        .take("ingress")
        .map(|v| rules(lw, v, &format!("{owner} › ingress"), "from"));
    let egress = f
        .take("egress")
        .map(|v| rules(lw, v, &format!("{owner} › egress"), "to"));
    (!mixed).then_some(SelectorPolicy {
        pods,
        types,
        ingress,
        egress,
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
