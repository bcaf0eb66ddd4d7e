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
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Ingress>::new(owner);
    keys::read(lw, &mut f, INGRESS, &mut r);
    f.finish_keys(lw, INGRESS);
    lw.app.ingresses.push(Ingress {
        name,
        labels: r.labels,
        annotations: r.annotations,
        ..r.item
    });
}

/// `ingress NAME { … }`: its keys and their readers, in the order they are read (the block before the
/// paths, as it always was: the locations, and so the model, stay as they were).
pub const INGRESS: &[Key<Reading<Ingress>>] = &[
    Key::new(
        "host",
        "the host it serves (`*.example.com` for a wildcard)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.host = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "class",
        "`ingressClassName`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.class = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "tls",
        "a declared or `external` Secret with the certificate, for every host; or `{ SECRET: [\"HOST\", …], … }`, one TLS entry per Secret",
        Some(|lw, r, _, key, v| match v {
            // `tls: { web-tls: ["shop.example.com"], api-tls: ["api.example.com"] }`: one entry per Secret.
            Some(v @ Value::Map(_)) => r.item.tls = ingress_tls(lw, v, &r.owner),
            Some(v) => r.item.tls_secret = lw.name(v, format!("{} › {key}", r.owner)),
            None => {}
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of IngressSpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::INGRESS_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, INGRESS_OWNED, &r.owner);
            }
        }),
    ),
    Key::new(
        "paths",
        "`{ \"/\": SERVICE => PORT }` for `host:`; the port by name or number, or the Service's first",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                ingress_paths(lw, v, None, &r.owner, &mut r.item.paths);
            }
        }),
    ),
    Key::new(
        "rules",
        "several hosts: `{ \"HOST\": { \"/\": SERVICE => PORT } }`",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            let owner = &r.owner;
            let mut rf = Fields::of(lw, Some(v), format!("{owner} › {key}"));
            for (k, paths) in rf.all() {
                let at = lw.loc(k.sp, format!("{owner} › rule {}", k.text));
                let host = Spanned::new(k.text.clone(), at);
                ingress_paths(lw, paths, Some(host), owner, &mut r.item.paths);
            }
        }),
    ),
    Key::new(
        "default",
        "`SERVICE => PORT`: the default backend, for requests no path matches",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v
                && let Some((service, port)) =
                    ingress_backend(lw, v, &format!("{} › {key}", r.owner))
            {
                r.item.default_backend = Some(IngressBackend { service, port });
            }
        }),
    ),
    Key::new(
        "path_type",
        "`\"Prefix\"` (default), `\"Exact\"` or `\"ImplementationSpecific\"`, for every path; one path's own: `exact(…)`, `prefix(…)`, `implementation_specific(…)` around its backend",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.path_type = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
];

/// `tls: { SECRET: ["HOST", …], … }`: one TLS entry per Secret.
fn ingress_tls(lw: &mut Lower, v: &Value, owner: &str) -> Vec<IngressTls> {
    let mut tf = Fields::of(lw, Some(v), format!("{owner} › tls"));
    let mut out = Vec::new();
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
        out.push(IngressTls { secret, hosts });
    }
    out
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
pub(super) fn ingress_backend(
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
