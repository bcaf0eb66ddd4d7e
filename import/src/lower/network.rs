//! Lowering what routes to workloads: a Service's ports as first-class `ports:` (when its workload's
//! container ports are first-class too), and networking.k8s.io/v1 Ingresses to imported Services (or, by
//! the port they name, to Services the input lacks, declared `external service NAME;`) as
//! `ingress NAME { host, class, tls, paths | rules, path_type }`.
//!
//! NetworkPolicies are in `netpol.rs`: the selector form, with the team's own labels as written (the
//! workload form's `from: [WORKLOAD]` selects pods by Piceli's labels).

use super::Cx;
use crate::dsl::{Dsl, Item};
use crate::print;
use serde_json::{Map, Value};

/// `ports: { http: 80 => http, admin: 9000 => 9000 }` for a Service spec whose every port has a name and
/// nothing but `name`, `port` and `targetPort` (TCP, no node port), each target one of the workload's
/// first-class container ports; `None` keeps the ports in `spec:`. Also the `(name, port)` pairs.
pub(super) fn service_ports(
    spec: &Map<String, Value>,
    container_ports: &[(String, i64)],
) -> Option<(Dsl, Vec<(String, i64)>)> {
    let mut entries = Vec::new();
    let mut named = Vec::new();
    for p in spec.get("ports")?.as_array()? {
        let p = p.as_object()?;
        if p.keys()
            .any(|k| !matches!(k.as_str(), "name" | "port" | "targetPort"))
        {
            return None;
        }
        let name = p.get("name")?.as_str()?;
        let port = p.get("port")?.as_i64()?;
        if piceli_core::rules::names::port_name(name).is_err()
            || named.iter().any(|(n, _): &(String, i64)| n == name)
        {
            return None;
        }
        let value = match p.get("targetPort") {
            // `port: 80` forwards to container port 80, which the workload must expose first-class.
            None if container_ports.iter().any(|(_, c)| *c == port) => Dsl::Int(port),
            None => return None,
            Some(Value::String(t)) if container_ports.iter().any(|(n, _)| n == t) => {
                if print::name(t) != *t {
                    return None;
                }
                Dsl::Arrow(Box::new(Dsl::Int(port)), Box::new(Dsl::Name(t.clone())))
            }
            Some(Value::Number(n)) => {
                let n = n.as_i64()?;
                if !container_ports.iter().any(|(_, c)| *c == n) {
                    return None;
                }
                Dsl::Arrow(Box::new(Dsl::Int(port)), Box::new(Dsl::Int(n)))
            }
            Some(_) => return None,
        };
        entries.push((name.to_string(), value));
        named.push((name.to_string(), port));
    }
    (!entries.is_empty()).then_some((Dsl::Map(entries), named))
}

/// An Ingress whose every rule routes HTTP paths to imported Services by a port they declare first-class,
/// with one path type and at most one TLS entry (for every host, with a declared Secret); anything else is
/// included as it is.
pub(super) fn ingress(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let mut spec = o["spec"].as_object()?.clone();
    let rules = spec.shift_remove("rules")?;
    let mut path_type: Option<String> = None;
    let mut hostless: Option<Dsl> = None;
    let mut by_host: Vec<(String, Dsl)> = Vec::new();
    let mut externals = Vec::new();
    for (i, rule) in rules.as_array()?.iter().enumerate() {
        let rule = rule.as_object()?;
        if rule.keys().any(|k| !matches!(k.as_str(), "host" | "http")) {
            return None;
        }
        let paths = paths(cx, rule.get("http")?, &mut path_type, &mut externals)?;
        match rule.get("host") {
            None if i == 0 => hostless = Some(paths),
            Some(Value::String(h)) if !by_host.iter().any(|(k, _)| k == h) => {
                by_host.push((h.clone(), paths))
            }
            _ => return None,
        }
    }
    let hosts: Vec<&String> = by_host.iter().map(|(h, _)| h).collect();
    let tls = match spec.shift_remove("tls") {
        None => None,
        Some(Value::Array(list)) if list.len() == 1 => {
            let t = list[0].as_object()?;
            let secret = t.get("secretName")?.as_str()?;
            let listed: Vec<&str> = match t.get("hosts") {
                None => Vec::new(),
                Some(h) => h
                    .as_array()?
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<_>>()?,
            };
            let same_hosts = listed.len() == hosts.len()
                && listed.iter().zip(&hosts).all(|(a, b)| *a == b.as_str());
            if t.len() > 2 || !same_hosts || !cx.secrets.contains(secret) {
                return None;
            }
            Some(secret.to_string())
        }
        Some(_) => return None,
    };
    // Services the input does not have (another app's): `external service NAME;` before the Ingress.
    for svc in externals {
        if cx.external_services.insert(svc.clone()) {
            let mut ext = Item::new("external service", &svc);
            ext.comments.push(format!(
                "piceli: Ingress {name} routes to it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it"
            ));
            cx.pending.push(ext);
        }
    }
    let mut item = Item::new("ingress", name);
    cx.meta(&mut item, o);
    if let Some(class) = spec.shift_remove("ingressClassName") {
        item.entry("class", Dsl::from_json(&class)?);
    }
    if let Some(secret) = tls {
        item.entry("tls", Dsl::Name(secret));
    }
    if let Some(p) = hostless {
        item.entry("paths", p);
    }
    if !by_host.is_empty() {
        item.entry("rules", Dsl::Map(by_host));
    }
    if let Some(t) = path_type.filter(|t| t != "Prefix") {
        item.entry("path_type", Dsl::Str(t));
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}

/// `{ "/": web => http, "/api": api => 8080 }`: one rule's paths, each to an imported Service's port, or to
/// a port of a Service the input lacks (added to `externals`).
fn paths(
    cx: &Cx,
    http: &Value,
    path_type: &mut Option<String>,
    externals: &mut Vec<String>,
) -> Option<Dsl> {
    let http = http.as_object()?;
    if http.len() != 1 {
        return None;
    }
    let mut out: Vec<(String, Dsl)> = Vec::new();
    for p in http.get("paths")?.as_array()? {
        let p = p.as_object()?;
        if p.keys()
            .any(|k| !matches!(k.as_str(), "path" | "pathType" | "backend"))
        {
            return None;
        }
        let path = p.get("path")?.as_str()?;
        let t = p.get("pathType")?.as_str()?;
        match path_type {
            Some(seen) if seen != t => return None,
            _ => *path_type = Some(t.to_string()),
        }
        let backend = p.get("backend")?.as_object()?;
        let service = backend.get("service")?.as_object()?;
        if backend.len() != 1 || service.len() != 2 {
            return None;
        }
        let svc = service.get("name")?.as_str()?;
        // `None`: a Service the input does not have, whose ports are someone else's.
        let ports = cx.services.get(svc);
        let port = service.get("port")?.as_object()?;
        if port.len() != 1 || print::name(svc) != svc {
            return None;
        }
        if ports.is_none() && piceli_core::rules::names::rfc1035_label(svc).is_err() {
            return None;
        }
        let port = match (port.get("name"), port.get("number")) {
            (Some(Value::String(n)), None)
                if ports.is_none_or(|ports| ports.iter().any(|(p, _)| p == n)) =>
            {
                if print::name(n) != *n {
                    return None;
                }
                Dsl::Name(n.clone())
            }
            (None, Some(Value::Number(n))) => {
                let n = n.as_i64()?;
                if ports.is_some_and(|ports| !ports.iter().any(|(_, p)| *p == n)) {
                    return None;
                }
                Dsl::Int(n)
            }
            _ => return None,
        };
        if ports.is_none() && !externals.iter().any(|e| e == svc) {
            externals.push(svc.to_string());
        }
        if out.iter().any(|(k, _)| k == path) {
            return None;
        }
        let to = Dsl::Arrow(Box::new(Dsl::Name(svc.to_string())), Box::new(port));
        out.push((path.to_string(), to));
    }
    (!out.is_empty()).then_some(Dsl::Map(out))
}
