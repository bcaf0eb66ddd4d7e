//! NetworkPolicies in the selector form: selector labels (PCL0087), `cidr(…)` blocks and their `except`
//! (PCL0084), `types:` (PCL0085), port ranges (PCL0086), ports and protocols — what the API server would
//! refuse, or silently ignore, found at compile time.

use super::Ctx;
use super::pods::{one_of, port_number};
use crate::codes::Code;
use crate::model::{App, Labels, PolicyPeer, PolicyPort, PortRef, SelectorPolicy, TrafficRule};
use crate::rules;
use crate::spanned::Spanned;
use std::net::IpAddr;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for p in app
        .network_policies
        .iter()
        .filter_map(|n| n.selector.as_ref())
    {
        policy(cx, p);
    }
}

fn policy(cx: &mut Ctx, p: &SelectorPolicy) {
    selector(cx, &p.pods);
    let mut seen: Vec<&str> = Vec::new();
    for t in &p.types {
        let Some(text) = cx.known(t) else { continue };
        if !matches!(text.as_str(), "Ingress" | "Egress") {
            cx.error(
                Code::NetworkPolicyTypes,
                t.at,
                format!("`{text}` is not a policy type"),
                "use \"Ingress\" and/or \"Egress\"",
            );
        } else if seen.contains(&text.as_str()) {
            cx.error(
                Code::NetworkPolicyTypes,
                t.at,
                format!("`{text}` is listed twice in `types:`"),
                "list each type once",
            );
        }
        seen.push(text);
    }
    let all_known = p.types.iter().all(|t| cx.known(t).is_some());
    for (rules, ty, key) in [
        (&p.ingress, "Ingress", "ingress"),
        (&p.egress, "Egress", "egress"),
    ] {
        if let (Some(_), Some(first)) = (rules, p.types.first())
            && all_known
            && !seen.contains(&ty)
        {
            cx.error(
                Code::NetworkPolicyTypes,
                first.at,
                format!("`types:` leaves out {ty}, so Kubernetes ignores the `{key}:` rules"),
                format!("add \"{ty}\" to `types:`, or remove `{key}:`"),
            );
        }
        for r in rules.iter().flatten() {
            rule(cx, r);
        }
    }
}

fn rule(cx: &mut Ctx, r: &TrafficRule) {
    for peer in &r.peers {
        match peer {
            PolicyPeer::Pods { pods, namespaces } => {
                selector(cx, pods);
                if let Some(ns) = namespaces {
                    selector(cx, ns);
                }
            }
            PolicyPeer::Namespaces(ns) => selector(cx, ns),
            PolicyPeer::Cidr { cidr, except } => block(cx, cidr, except),
        }
    }
    for p in &r.ports {
        port(cx, p);
    }
}

fn selector(cx: &mut Ctx, labels: &Labels) {
    for (k, v) in labels {
        if let Some(key) = cx.known(k) {
            cx.rule(Code::NetworkPolicySelector, k.at, rules::label_key(key));
        }
        if let Some(value) = cx.known(v) {
            cx.rule(Code::NetworkPolicySelector, v.at, rules::label_value(value));
        }
    }
}

/// An address and prefix length: `10.0.0.0/8`.
fn parse_cidr(s: &str) -> Option<(IpAddr, u8)> {
    let (addr, len) = s.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    if !len.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let len: u8 = len.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((addr, len))
}

/// The address's top `len` bits, as a number.
fn network(addr: IpAddr, len: u8) -> u128 {
    let (bits, width) = match addr {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32u32),
        IpAddr::V6(a) => (u128::from(a), 128u32),
    };
    let len = u32::from(len);
    if len == 0 { 0 } else { bits >> (width - len) }
}

fn block(cx: &mut Ctx, cidr: &Spanned<String>, except: &[Spanned<String>]) {
    let Some(text) = cx.known(cidr) else { return };
    let Some((addr, len)) = parse_cidr(text) else {
        cx.error(
            Code::NetworkPolicyCidr,
            cidr.at,
            format!("`{text}` is not a CIDR block"),
            "write an address and a prefix length, e.g. \"10.0.0.0/8\" or \"fd00::/8\"",
        );
        return;
    };
    for e in except {
        let Some(etext) = cx.known(e) else { continue };
        let inside = parse_cidr(etext).is_some_and(|(ea, el)| {
            ea.is_ipv4() == addr.is_ipv4() && el > len && network(ea, len) == network(addr, len)
        });
        if !inside {
            cx.error(
                Code::NetworkPolicyCidr,
                e.at,
                format!("`{etext}` is not a smaller block inside `{text}`"),
                format!("`except` lists blocks inside `{text}` with a longer prefix, or remove it"),
            );
        }
    }
}

fn port(cx: &mut Ctx, p: &PolicyPort) {
    if let Some(proto) = &p.protocol {
        one_of(cx, proto, &["TCP", "UDP", "SCTP"], "protocol");
    }
    match &p.port {
        Some(PortRef::Number(n)) => port_number(cx, n),
        Some(PortRef::Name(n)) => {
            if let Some(name) = cx.known(n) {
                cx.rule(Code::InvalidPortName, n.at, rules::port_name(name));
            }
        }
        None => {}
    }
    let Some(end) = &p.end else { return };
    port_number(cx, end);
    match &p.port {
        Some(PortRef::Number(start)) => {
            if let (Some(&s), Some(&e)) = (cx.known(start), cx.known(end))
                && e < s
            {
                cx.error(
                    Code::NetworkPolicyPortRange,
                    end.at,
                    format!("the range ends at {e}, below its first port {s}"),
                    format!("make `end` {s} or more"),
                );
            }
        }
        _ => cx.error(
            Code::NetworkPolicyPortRange,
            end.at,
            "`end` needs the range's first port as a number",
            "write `port(8000, end: 8080)`",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrs_parse_and_nest() {
        let (a, l) = parse_cidr("10.0.0.0/8").expect("v4");
        assert_eq!(l, 8);
        let (b, m) = parse_cidr("10.1.0.0/16").expect("v4");
        assert_eq!(network(a, l), network(b, l));
        assert!(m > l);
        assert!(parse_cidr("10.0.0.0/33").is_none());
        assert!(parse_cidr("10.0.0.0").is_none());
        assert!(parse_cidr("fd00::/8").is_some());
        let (c, _) = parse_cidr("11.0.0.0/16").expect("v4");
        assert_ne!(network(a, l), network(c, l));
    }
}
