//! Lowering Services, NetworkPolicies and Ingresses.

use super::blocks::{
    INGRESS_OWNED, NETWORK_POLICY_OWNED, NETWORK_POLICY_SELECTOR_OWNED, SERVICE_OWNED,
};
use super::keys::{self, Key, Reading, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

pub(super) fn service(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("service {}", name.v);
    if item.arrow.is_none() {
        return service_of_no_workload(lw, item, name, owner);
    }
    let Some(selects) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut s = Service {
        name,
        selects,
        ..Service::default()
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    if let Some(v) = f.take("port")
        && let Some(p) = service_port(lw, v, None, &owner)
    {
        s.ports.push(p);
    }
    if let Some(v) = f.take("ports") {
        let mut pf = Fields::of(lw, Some(v), format!("{owner} › ports"));
        for (k, val) in pf.all() {
            if let Some(p) = service_port(lw, val, Some(k), &owner) {
                s.ports.push(p);
            }
        }
    }
    if let Some(v) = f.take("node_ports") {
        let mut nf = Fields::of(lw, Some(v), format!("{owner} › node_ports"));
        for (k, val) in nf.all() {
            let n = lw.int(val, format!("{owner} › node_port {}", k.text));
            match s.ports.iter_mut().find(|p| p.name.v == k.text) {
                Some(p) => p.node_port = n,
                None => lw.fail(
                    Code::UnknownServicePort,
                    k.sp,
                    format!("{owner} has no port named `{}`", k.text),
                    "name one of the Service's ports",
                ),
            }
        }
    }
    if let Some(v) = f.take("type") {
        const TYPES: &[&str] = &["cluster_ip", "node_port", "load_balancer", "headless"];
        if let Some(t) = lw.name(v, format!("{owner} › type")) {
            s.service_type = match t.v.as_str() {
                "cluster_ip" => ServiceType::ClusterIp,
                "node_port" => ServiceType::NodePort,
                "load_balancer" => ServiceType::LoadBalancer,
                "headless" => ServiceType::Headless,
                other => {
                    let help = match piceli_core::rules::did_you_mean(other, TYPES.iter().copied())
                    {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "use cluster_ip, node_port, load_balancer or headless".into(),
                    };
                    lw.fail(
                        Code::InvalidValue,
                        v.sp(),
                        format!("`{other}` is not a Service type"),
                        help,
                    );
                    ServiceType::ClusterIp
                }
            };
        }
    }
    if let Some(v) = f.take("access") {
        s.access = access(lw, v, &owner);
    }
    (s.labels, s.annotations) = lw.meta(&mut f, &owner);
    s.spec = lw.block(&mut f, "spec", schema::SERVICE_SPEC, SERVICE_OWNED, &owner);
    f.finish_keys(lw, super::keys::SERVICE);
    lw.app.services.push(s);
}

/// Keys that route to a workload's container ports: a Service without `-> WORKLOAD` has none of them.
const WORKLOAD_KEYS: &[&str] = &["port", "ports", "type", "node_ports", "access"];

/// `service NAME { labels, annotations, spec: { … } }`: a Service of no workload (ExternalName, a selector
/// of the pods' own labels, or none), rendered as written; its spec is checked in piceli-core (PCL0088).
fn service_of_no_workload(lw: &mut Lower, item: &Item, name: Spanned<String>, owner: String) {
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let routing: Vec<&str> = WORKLOAD_KEYS
        .iter()
        .copied()
        .filter(|k| f.key(k).is_some())
        .collect();
    if let Some(first) = routing.first() {
        // One error at the name (the item is left out: no follow-on errors about its ports).
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("`{owner}` does not say which workload it is for"),
            format!(
                "`{first}:` routes to a workload's container ports: write `service NAME -> WORKLOAD {{ … }}`; a Service of no workload gives its ports in `spec: {{ ports: [ … ] }}`"
            ),
        );
        for k in &routing {
            f.take(k);
        }
    }
    let mut s = Service {
        name,
        ..Service::default()
    };
    (s.labels, s.annotations) = lw.meta(&mut f, &owner);
    s.spec = lw.block(&mut f, "spec", schema::SERVICE_SPEC, &[], &owner);
    f.finish_keys(lw, super::keys::SERVICE_OF_NO_WORKLOAD);
    if routing.is_empty() {
        lw.app.services.push(s);
    }
}

/// `80 => http`, `80 => 8080`, or `80` (same number on the pod).
fn service_port(
    lw: &mut Lower,
    v: &Value,
    key: Option<&crate::ast::NameTok>,
    owner: &str,
) -> Option<ServicePort> {
    let desc = format!("{owner} › port");
    let (port_v, target) = match v {
        Value::Arrow(a, b) => (a.as_ref(), lw.port_ref(b, &format!("{desc} › target"))),
        other => (other, None),
    };
    let port = lw.int(port_v, desc.clone())?;
    let name_text = match (key, &target) {
        (Some(k), _) => k.text.clone(),
        (None, Some(PortRef::Name(n))) => n.v.clone(),
        _ => format!("port-{}", port.v),
    };
    let name_sp = key.map(|k| k.sp).unwrap_or(v.sp());
    let name = Spanned::new(name_text, lw.loc(name_sp, format!("{desc} name")));
    Some(ServicePort {
        name,
        port,
        target,
        node_port: None,
    })
}

fn access(lw: &mut Lower, v: &Value, owner: &str) -> Option<Access> {
    let call = lw.call(v, &["forward"], "forward(local: 18080, health: \"/\")")?;
    let desc = format!("{owner} › access");
    let mut nf = lw.named(call, &desc);
    let local = match nf.take("local") {
        Some(l) => lw.int(l, format!("{desc} › local")),
        None => {
            lw.fail(
                Code::MissingKey,
                call.sp,
                "a forward needs its local port",
                "write `forward(local: 18080)`",
            );
            None
        }
    };
    let port = nf
        .take("port")
        .and_then(|p| lw.name(p, format!("{desc} › port")));
    let health = nf
        .take("health")
        .and_then(|h| lw.str(h, format!("{desc} › health")));
    nf.finish(lw, &["local", "port", "health"]);
    lw.max_args(call, 0, "forward(local: 18080)");
    Some(Access {
        local_port: local?,
        port,
        health,
    })
}

pub(super) fn network_policy(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("network_policy {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    if super::netpol::SELECTOR_KEYS
        .iter()
        .any(|k| f.key(k).is_some())
    {
        let selector = super::netpol::selector_form(lw, item, &mut f, &owner);
        let mut n = NetworkPolicy {
            name,
            selector,
            ..NetworkPolicy::default()
        };
        (n.labels, n.annotations) = lw.meta(&mut f, &owner);
        n.spec = lw.block(
            &mut f,
            "spec",
            schema::NETWORK_POLICY_SPEC,
            NETWORK_POLICY_SELECTOR_OWNED,
            &owner,
        );
        f.finish_keys(lw, super::keys::NETWORK_POLICY_SELECTOR);
        // A mix of the two forms is reported once; the policy is left out (no follow-on errors).
        if n.selector.is_some() {
            lw.app.network_policies.push(n);
        }
        return;
    }
    let Some(applies_to) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut r = Reading::<NetworkPolicy>::new(owner);
    keys::read(lw, &mut f, NETWORK_POLICY, &mut r);
    f.finish_keys(lw, NETWORK_POLICY);
    lw.app.network_policies.push(NetworkPolicy {
        name,
        applies_to,
        labels: r.labels,
        annotations: r.annotations,
        ..r.item
    });
}

/// `network_policy NAME -> WORKLOAD { … }`: its keys and their readers.
pub const NETWORK_POLICY: &[Key<Reading<NetworkPolicy>>] = &[
    Key::new(
        "from",
        "who may connect: workloads of the app and `namespace(\"NAME\")`; none and no `ports:` denies all ingress",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            let items: Vec<&Value> = match v {
                Value::List(items, _) => items.iter().collect(),
                other => vec![other],
            };
            let owner = &r.owner;
            let n = &mut r.item;
            for i in items {
                match i {
                    Value::Call(c) if c.name.text == "namespace" => {
                        if let Some(a) = lw.arg(c, 0, "the namespace", "namespace(\"monitoring\")")
                            && let Some(ns) = lw.text(a, format!("{owner} › {key} namespace"))
                        {
                            n.from_namespaces.push(ns);
                        }
                    }
                    other => {
                        if let Some(w) = lw.name(other, format!("{owner} › {key}")) {
                            n.from_workloads.push(w);
                        }
                    }
                }
            }
        }),
    ),
    Key::new(
        "ports",
        "the workload's container ports that are open, by name or number (all when left out)",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            let items: Vec<&Value> = match v {
                Value::List(items, _) => items.iter().collect(),
                other => vec![other],
            };
            for i in items {
                if let Some(p) = lw.port_ref(i, &format!("{} › {key}", r.owner)) {
                    r.item.ports.push(p);
                }
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
                let root = schema::NETWORK_POLICY_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, NETWORK_POLICY_OWNED, &r.owner);
            }
        }),
    ),
];

pub(super) fn ingress(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("ingress {}", name.v);
    let mut i = Ingress {
        name,
        ..Ingress::default()
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    i.host = f
        .take("host")
        .and_then(|v| lw.str(v, format!("{owner} › host")));
    i.class = f
        .take("class")
        .and_then(|v| lw.str(v, format!("{owner} › class")));
    match f.take("tls") {
        // `tls: { web-tls: ["shop.example.com"], api-tls: ["api.example.com"] }`: one entry per Secret.
        Some(v @ Value::Map(_)) => {
            let mut tf = Fields::of(lw, Some(v), format!("{owner} › tls"));
            for (k, hosts) in tf.all() {
                let desc = format!("{owner} › tls {}", k.text);
                let secret = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
                let hosts = match hosts {
                    Value::List(..) => lw.str_list(hosts, &format!("{desc} › host")),
                    other => {
                        lw.wrong_type(
                            other,
                            "a list of the hosts the Secret's certificate covers",
                            "[\"shop.example.com\"]",
                        );
                        Vec::new()
                    }
                };
                i.tls.push(IngressTls { secret, hosts });
            }
        }
        Some(v) => i.tls_secret = lw.name(v, format!("{owner} › tls")),
        None => {}
    }
    (i.labels, i.annotations) = lw.meta(&mut f, &owner);
    i.spec = lw.block(&mut f, "spec", schema::INGRESS_SPEC, INGRESS_OWNED, &owner);
    if let Some(v) = f.take("paths") {
        ingress_paths(lw, v, None, &owner, &mut i.paths);
    }
    if let Some(v) = f.take("rules") {
        let mut rf = Fields::of(lw, Some(v), format!("{owner} › rules"));
        for (k, paths) in rf.all() {
            let at = lw.loc(k.sp, format!("{owner} › rule {}", k.text));
            let host = Spanned::new(k.text.clone(), at);
            ingress_paths(lw, paths, Some(host), &owner, &mut i.paths);
        }
    }
    if let Some(v) = f.take("default") {
        let desc = format!("{owner} › default");
        if let Some((service, port)) = ingress_backend(lw, v, &desc) {
            i.default_backend = Some(IngressBackend { service, port });
        }
    }
    i.path_type = f
        .take("path_type")
        .and_then(|v| lw.str(v, format!("{owner} › path_type")));
    f.finish_keys(lw, super::keys::INGRESS);
    lw.app.ingresses.push(i);
}

/// The calls that give one path a path type of its own: `"/healthz": exact(web => http)`.
const PATH_TYPES: &[(&str, &str)] = &[
    ("prefix", "Prefix"),
    ("exact", "Exact"),
    ("implementation_specific", "ImplementationSpecific"),
];

/// `{ "/": web => http, "/healthz": exact(web => http), … }`: paths of one rule (the Ingress's `host:` when
/// `host` is `None`).
fn ingress_paths(
    lw: &mut Lower,
    v: &Value,
    host: Option<Spanned<String>>,
    owner: &str,
    out: &mut Vec<IngressPath>,
) {
    let mut pf = Fields::of(lw, Some(v), format!("{owner} › paths"));
    for (k, val) in pf.all() {
        let desc = format!("{owner} › path {}", k.text);
        let path = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let (backend, path_type) = match val {
            Value::Call(_) => {
                let names: Vec<&str> = PATH_TYPES.iter().map(|(n, _)| *n).collect();
                let Some(call) = lw.call(val, &names, "exact(web => http)") else {
                    continue;
                };
                lw.max_args(call, 1, "exact(web => http)");
                if let Some((k, _)) = call.named.first() {
                    lw.fail(
                        Code::UnknownKey,
                        k.sp,
                        format!("`{}(…)` takes no named arguments", call.name.text),
                        "write the backend alone: `exact(web => http)`",
                    );
                }
                let Some(inner) = lw.arg(call, 0, "the backend", "exact(web => http)") else {
                    continue;
                };
                let t = PATH_TYPES
                    .iter()
                    .find(|(n, _)| *n == call.name.text)
                    .map(|(_, t)| *t)
                    .unwrap_or_default();
                let at = lw.loc(call.name.sp, format!("{desc} › path type"));
                (inner, Some(Spanned::new(t.to_string(), at)))
            }
            other => (other, None),
        };
        if let Some((service, port)) = ingress_backend(lw, backend, &desc) {
            out.push(IngressPath {
                path,
                service,
                port,
                host: host.clone(),
                path_type,
            });
        }
    }
}

/// `web => http`, `web => 8080` or `web` (the Service's first port).
fn ingress_backend(
    lw: &mut Lower,
    v: &Value,
    desc: &str,
) -> Option<(Spanned<String>, Option<PortRef>)> {
    let (svc, port) = match v {
        Value::Arrow(a, b) => (a.as_ref(), lw.port_ref(b, &format!("{desc} › port"))),
        other => (other, None),
    };
    let service = lw.name(svc, format!("{desc} › service"))?;
    Some((service, port))
}
