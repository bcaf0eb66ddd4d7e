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

/// A Service's first-class ports: the key (`port` or `ports`), its value, and the `(name, port)` pairs.
pub(super) type ServicePorts = (&'static str, Dsl, Vec<(String, i64)>);

/// `ports: { http: 80 => http, admin: 9000 => 9000 }` for a Service spec whose every port has a name and
/// nothing but `name`, `port` and `targetPort` (TCP, no node port), each target one of the workload's
/// first-class container ports, or `port: 80 => 8080` (`port: 80`) for its only port without a name; `None`
/// keeps the ports in `spec:`. Also the key and the `(name, port)` pairs (`""` for the unnamed one).
pub(super) fn service_ports(
    spec: &Map<String, Value>,
    container_ports: &[(String, i64)],
) -> Option<ServicePorts> {
    let mut entries = Vec::new();
    let mut named = Vec::new();
    let list = spec.get("ports")?.as_array()?;
    // One port without a name: `port: 80`, `port: 80 => 8080` (rendered without a name, as written).
    if let [only] = list.as_slice()
        && only.get("name").is_none()
    {
        let p = only.as_object()?;
        if p.keys()
            .any(|k| !matches!(k.as_str(), "port" | "targetPort"))
        {
            return None;
        }
        let port = p.get("port")?.as_i64()?;
        let value = match p.get("targetPort") {
            None if container_ports.iter().any(|(_, c)| *c == port) => Dsl::Int(port),
            Some(Value::Number(n)) => {
                let n = n.as_i64()?;
                if !container_ports.iter().any(|(_, c)| *c == n) {
                    return None;
                }
                Dsl::Arrow(Box::new(Dsl::Int(port)), Box::new(Dsl::Int(n)))
            }
            // A named target would name the port after it (`port: 80 => http`): kept in `spec:`.
            _ => return None,
        };
        return Some(("port", value, vec![(String::new(), port)]));
    }
    for p in list {
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
            Some(Value::String(t))
                if !t.is_empty() && container_ports.iter().any(|(n, _)| n == t) =>
            {
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
    (!entries.is_empty()).then_some(("ports", Dsl::Map(entries), named))
}

/// An Ingress whose every rule routes HTTP paths, and whose default backend (if any) routes, to imported
/// Services by a port they declare first-class, or to Services the input lacks by the port they name
/// (`external service NAME;`). The most common path type is the Ingress's `path_type:`, each other path's
/// wraps its backend (`exact(…)`); one TLS entry for every host is `tls: NAME`, several are `tls: { NAME:
/// [hosts] }` (a Secret the input lacks is declared `external secret NAME;`). TLS entries the DSL cannot
/// name (no Secret, a Secret twice, one kept in the include file, `hosts: []`) stay in `spec:`; rules the
/// DSL cannot write put the whole spec in `spec:` ([`ingress_in_spec`]).
pub(super) fn ingress(cx: &mut Cx, o: &Value) -> Option<Item> {
    first_class_ingress(cx, o).or_else(|| ingress_in_spec(cx, o))
}

/// An Ingress whose rules the DSL's `paths:`/`rules:` cannot write (a host-less rule after the first, a
/// host twice, a rule without `http`, a resource backend in a path, a port the Service does not declare):
/// first-class all the same, its whole spec in the schema-checked `spec:` block — never the include file.
fn ingress_in_spec(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let mut spec = o["spec"].as_object()?.clone();
    let mut item = Item::new("ingress", name);
    cx.meta(&mut item, o);
    if let Some(class) = spec.shift_remove("ingressClassName") {
        item.entry("class", Dsl::from_json(&class)?);
    }
    item.comments.push(
        "piceli: its rules are written as the API's `spec:` (the DSL's `paths:`/`rules:` cannot say them as they are); the Services they name are not checked by name".to_string(),
    );
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}

fn first_class_ingress(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let mut spec = o["spec"].as_object()?.clone();
    // `rules: []` is kept as written in `spec:` (the DSL renders no rules at all).
    let rules = match spec.get("rules") {
        Some(Value::Array(r)) if !r.is_empty() => spec.shift_remove("rules"),
        _ => None,
    };
    let mut hostless: Option<Vec<Path>> = None;
    let mut by_host: Vec<(String, Vec<Path>)> = Vec::new();
    let mut externals = Vec::new();
    for (i, rule) in rules
        .iter()
        .flat_map(|r| r.as_array())
        .flatten()
        .enumerate()
    {
        let rule = rule.as_object()?;
        if rule.keys().any(|k| !matches!(k.as_str(), "host" | "http")) {
            return None;
        }
        let paths = paths(cx, rule.get("http")?, &mut externals)?;
        match rule.get("host") {
            None if i == 0 => hostless = Some(paths),
            Some(Value::String(h)) if !by_host.iter().any(|(k, _)| k == h) => {
                by_host.push((h.clone(), paths))
            }
            _ => return None,
        }
    }
    // A Service backend by a port is `default:`; a resource backend stays in `spec:`.
    let default = match spec.get("defaultBackend") {
        Some(b) if b.get("service").is_some() => {
            let d = backend(cx, b, &mut externals)?;
            spec.shift_remove("defaultBackend");
            Some(d)
        }
        _ => None,
    };
    let hosts: Vec<&String> = by_host.iter().map(|(h, _)| h).collect();
    let tls = spec.get("tls").and_then(|t| tls(cx, t, &hosts));
    if tls.is_some() {
        spec.shift_remove("tls");
    }
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
    // TLS Secrets the input does not have (cert-manager's, another team's): `external secret NAME;`.
    for secret in tls
        .as_ref()
        .map(|(_, missing)| missing.clone())
        .unwrap_or_default()
    {
        let mut ext = Item::new("external secret", &secret);
        ext.comments.push(format!(
            "piceli: Ingress {name} takes its TLS certificate from it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it"
        ));
        cx.secrets.insert(secret);
        cx.pending.push(ext);
    }
    // The Ingress's path type is the most common one (Prefix, the DSL's default, on a tie); the others are
    // each path's own.
    let all: Vec<&Path> = hostless
        .iter()
        .chain(by_host.iter().map(|(_, p)| p))
        .flatten()
        .collect();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for p in &all {
        match counts.iter_mut().find(|(t, _)| *t == p.path_type) {
            Some((_, n)) => *n += 1,
            None => counts.push((&p.path_type, 1)),
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max().unwrap_or_default();
    let path_type = counts
        .iter()
        .find(|(t, n)| *t == "Prefix" && *n == most)
        .or_else(|| counts.iter().find(|(_, n)| *n == most))
        .map_or("Prefix", |(t, _)| *t)
        .to_string();
    let to_dsl = |paths: Vec<Path>| {
        Dsl::Map(
            paths
                .into_iter()
                .map(|p| {
                    let to = if p.path_type == path_type {
                        p.to
                    } else {
                        let call = PATH_TYPES.iter().find(|(_, t)| *t == p.path_type);
                        let call = call.map_or("prefix", |(c, _)| *c);
                        Dsl::Call(call.to_string(), vec![p.to], Vec::new())
                    };
                    (p.path, to)
                })
                .collect(),
        )
    };
    let mut item = Item::new("ingress", name);
    cx.meta(&mut item, o);
    if let Some(class) = spec.shift_remove("ingressClassName") {
        item.entry("class", Dsl::from_json(&class)?);
    }
    if let Some((t, _)) = tls {
        item.entry("tls", t);
    }
    if let Some(p) = hostless {
        item.entry("paths", to_dsl(p));
    }
    if !by_host.is_empty() {
        let rules = by_host.into_iter().map(|(h, p)| (h, to_dsl(p))).collect();
        item.entry("rules", Dsl::Map(rules));
    }
    if let Some(d) = default {
        item.entry("default", d);
    }
    if path_type != "Prefix" {
        item.entry("path_type", Dsl::Str(path_type));
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}

/// The path types and the calls that give one path its own (`"/healthz": exact(web => http)`).
const PATH_TYPES: &[(&str, &str)] = &[
    ("prefix", "Prefix"),
    ("exact", "Exact"),
    ("implementation_specific", "ImplementationSpecific"),
];

/// One path of a rule: `"/api": api => 8000`, of its type.
struct Path {
    path: String,
    to: Dsl,
    path_type: String,
}

/// `tls: NAME` when one entry names a Secret for exactly the rules' hosts, else `tls: { NAME: [hosts], … }`
/// (each entry a Secret and valid hosts, no Secret twice); also the Secrets the input lacks. `None`: the
/// entries stay in `spec:` as written (a Secret of the include file is not one `tls:` can name).
fn tls(cx: &Cx, t: &Value, rule_hosts: &[&String]) -> Option<(Dsl, Vec<String>)> {
    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    for e in t.as_array()? {
        let e = e.as_object()?;
        if e.keys()
            .any(|k| !matches!(k.as_str(), "hosts" | "secretName"))
        {
            return None;
        }
        let secret = e.get("secretName")?.as_str()?;
        let hosts: Vec<String> = match e.get("hosts") {
            None => Vec::new(),
            // `hosts: []` as written renders as no `hosts` at all from `tls:`: kept in `spec:`.
            Some(Value::Array(h)) if h.is_empty() => return None,
            Some(h) => h
                .as_array()?
                .iter()
                .map(|h| h.as_str().map(String::from))
                .collect::<Option<_>>()?,
        };
        let valid = |h: &String| {
            let bare = h.strip_prefix("*.").unwrap_or(h);
            piceli_core::rules::dns1123_subdomain(bare).is_ok()
        };
        let named = cx.secrets.contains(secret) || !cx.input_secrets.contains(secret);
        if !named
            || !hosts.iter().all(valid)
            || print::name(secret) != secret
            || entries.iter().any(|(s, _)| s == secret)
        {
            return None;
        }
        entries.push((secret.to_string(), hosts));
    }
    if entries.is_empty() {
        return None;
    }
    let missing: Vec<String> = entries
        .iter()
        .map(|(s, _)| s.clone())
        .filter(|s| !cx.secrets.contains(s))
        .collect();
    let every_host = entries.len() == 1
        && entries[0].1.len() == rule_hosts.len()
        && entries[0].1.iter().zip(rule_hosts).all(|(a, b)| a == *b);
    let dsl = if every_host {
        Dsl::Name(entries.remove(0).0)
    } else {
        Dsl::Map(
            entries
                .into_iter()
                .map(|(s, hosts)| (s, Dsl::List(hosts.into_iter().map(Dsl::Str).collect())))
                .collect(),
        )
    };
    Some((dsl, missing))
}

/// One rule's paths, each to an imported Service's port, or to a port of a Service the input lacks (added
/// to `externals`).
fn paths(cx: &Cx, http: &Value, externals: &mut Vec<String>) -> Option<Vec<Path>> {
    let http = http.as_object()?;
    if http.len() != 1 {
        return None;
    }
    let mut out: Vec<Path> = Vec::new();
    for p in http.get("paths")?.as_array()? {
        let p = p.as_object()?;
        if p.keys()
            .any(|k| !matches!(k.as_str(), "path" | "pathType" | "backend"))
        {
            return None;
        }
        let path = p.get("path")?.as_str()?;
        let path_type = p.get("pathType")?.as_str()?;
        if !PATH_TYPES.iter().any(|(_, t)| *t == path_type) || out.iter().any(|o| o.path == path) {
            return None;
        }
        let to = backend(cx, p.get("backend")?, externals)?;
        out.push(Path {
            path: path.to_string(),
            to,
            path_type: path_type.to_string(),
        });
    }
    (!out.is_empty()).then_some(out)
}

/// `web => http`, `web => 80`: a Service backend, to an imported Service's port, or to a port of a Service
/// the input lacks (added to `externals`).
fn backend(cx: &Cx, backend: &Value, externals: &mut Vec<String>) -> Option<Dsl> {
    let backend = backend.as_object()?;
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
    Some(Dsl::Arrow(
        Box::new(Dsl::Name(svc.to_string())),
        Box::new(port),
    ))
}
