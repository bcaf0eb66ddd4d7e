//! Services of no workload (`service NAME { spec: { … } }`: ExternalName, a selector of the pods' own labels,
//! or none with Endpoints made by hand), rendered as written: what the API server would refuse, or
//! silently ignore, found at compile time (PCL0088); and references to ports written in a Service's
//! `spec: { ports }` (PCL0023).

use super::Ctx;
use crate::codes::Code;
use crate::model::{BlockValue, PortRef, Service};
use crate::rules;

pub(super) fn check(cx: &mut Ctx, s: &Service) {
    let spec = &s.spec;
    let text = |key: &str| match spec.get(key) {
        Some(BlockValue::Str(v)) => Some(v),
        _ => None,
    };
    let ty = text("type");
    let external = ty
        .and_then(|t| cx.known(t))
        .is_some_and(|t| t == "ExternalName");
    match (ty, spec.get("externalName")) {
        (Some(t), None) if external => cx.error(
            Code::ServiceOfNoWorkload,
            t.at,
            format!("Service `{}` is of type ExternalName and names no `externalName`", s.name.v),
            "add the DNS name it stands for: `externalName: \"db.example.com\"`",
        ),
        (_, Some(BlockValue::Str(n))) if external => {
            if let Some(name) = cx.known(n) {
                let verdict = rules::dns1123_subdomain(name.strip_suffix('.').unwrap_or(name))
                    .map_err(|e| {
                        rules::RuleError::new(
                            format!("`externalName` `{name}` is not a DNS name: {}", e.message),
                            "write a lowercase DNS name, e.g. \"db.example.com\"",
                        )
                    });
                cx.rule(Code::ServiceOfNoWorkload, n.at, verdict);
            }
        }
        (_, Some(v)) if !external && ty.is_none_or(|t| cx.known(t).is_some()) => cx.error(
            Code::ServiceOfNoWorkload,
            v.at(),
            format!(
                "Service `{}` is not of type ExternalName, so Kubernetes ignores its `externalName`",
                s.name.v
            ),
            "add `type: \"ExternalName\"`, or remove `externalName`",
        ),
        _ => {}
    }
    let cluster_ip = text("clusterIP");
    if external {
        if let Some(ip) = cluster_ip.filter(|ip| cx.known(*ip).is_some_and(|v| !v.is_empty())) {
            cx.error(
                Code::ServiceOfNoWorkload,
                ip.at,
                format!(
                    "Service `{}` is of type ExternalName, which has no cluster IP",
                    s.name.v
                ),
                "remove `clusterIP`",
            );
        }
    } else if spec.get("ports").is_none()
        && cluster_ip.is_none_or(|ip| cx.known(ip).is_some_and(|v| v != "None"))
        && ty.is_none_or(|t| cx.known(t).is_some())
    {
        cx.error(
            Code::ServiceOfNoWorkload,
            s.name.at,
            format!("Service `{}` has no ports and is not an ExternalName Service", s.name.v),
            "list its ports in `spec: { ports: [{ name: \"http\", port: 80 }] }`, or make it `type: \"ExternalName\"` with `externalName: \"…\"`; a Service of a workload is `service NAME -> WORKLOAD`",
        );
    }
    if let Some(BlockValue::Map(selector)) = spec.get("selector") {
        for (k, v) in selector.entries() {
            if let Some(key) = cx.known(k) {
                cx.rule(Code::ServiceOfNoWorkload, k.at, rules::label_key(key));
            }
            if let BlockValue::Str(value) = v
                && let Some(value) = cx.known(value)
            {
                cx.rule(Code::ServiceOfNoWorkload, v.at(), rules::label_value(value));
            }
        }
    }
}

/// A reference to a port of a Service whose ports are written in `spec: { ports: [ … ] }` (not checked
/// when one of them is a Rust expression).
pub(super) fn spec_port(cx: &mut Ctx, s: &Service, port: &PortRef) {
    let Some(ports) = s.spec_ports() else { return };
    if ports
        .iter()
        .any(|(n, p)| cx.known(p).is_none() || n.is_some_and(|n| cx.known(n).is_none()))
    {
        return;
    }
    let (ok, at, shown) = match port {
        PortRef::Name(n) => (
            ports
                .iter()
                .any(|(name, _)| name.is_some_and(|x| x.v == n.v)),
            n.at,
            n.v.clone(),
        ),
        PortRef::Number(n) => match cx.known(n) {
            Some(&num) => (ports.iter().any(|(_, p)| p.v == num), n.at, num.to_string()),
            None => return,
        },
    };
    if !ok {
        let listed: Vec<String> = ports
            .iter()
            .map(|(n, p)| n.map(|n| n.v.clone()).unwrap_or_else(|| p.v.to_string()))
            .collect();
        let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
        cx.error(
            Code::UnknownServicePort,
            at,
            format!(
                "Service `{}` has no port `{shown}` in its `spec: {{ ports }}`",
                s.name.v
            ),
            format!("use one of {}", super::list(&listed)),
        );
    }
}
