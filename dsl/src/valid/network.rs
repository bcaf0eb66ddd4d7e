//! Lowering NetworkPolicies and Ingresses (Services: `service.rs`).

use super::blocks::{INGRESS_OWNED, NETWORK_POLICY_OWNED};
use super::keys::{self, Key, Reading, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

pub(super) fn network_policy(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("network_policy {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    if super::netpol::form_keys().any(|k| f.key(k).is_some()) {
        // A mix of the two forms is reported once; the policy is left out (no follow-on errors).
        if let Some(policy) = super::netpol::selector_form(lw, item, f, &owner) {
            lw.app
                .network_policies
                .push(NetworkPolicy { name, ..policy });
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
