//! `http_route NAME { host: "shop.example.com", gateway: public, paths: { "/": api => http } }`: a
//! Gateway API `HTTPRoute`, written like an `ingress`. It becomes a `resource` object of the app (so
//! its references are checked by the table every HTTPRoute is, and `plan` requires its CRD as for any
//! `resource`), once every item is lowered: the Services' ports give the port numbers the route needs.
//! The app's `crds` must define `gateway.networking.k8s.io/v1/HTTPRoute`; the object is checked against
//! that schema.

use super::Lower;
use super::keys::Key;
use super::{Fields, network};
use crate::ast::{Item, Sp};
use piceli_core::Code;
use piceli_core::crd::{self, Found, Node};
use piceli_core::model::{Block, BlockValue, CustomObject, ExternalKind, Labels, PortRef};
use piceli_core::rules::did_you_mean;
use piceli_core::schema::check::check_object;
use piceli_core::spanned::{Loc, Name, Spanned};

/// The kind an `http_route` renders.
const KIND: &str = "gateway.networking.k8s.io/v1/HTTPRoute";

/// The keys of `http_route NAME { … }` (for docs/dsl.md's key reference and unknown-key errors).
pub const HTTP_ROUTE: &[Key] = &[
    Key::new(
        "host",
        "the host it serves (`hostnames`); without it, every host of the Gateway's listener",
        None,
    ),
    Key::new(
        "gateway",
        "the Gateway it attaches to (`parentRefs`; required): a `resource Gateway` of the app or an `external gateway`",
        None,
    ),
    Key::new(
        "gateway_namespace",
        "the namespace of another namespace's Gateway (`parentRefs[].namespace`; its name and listeners are not checked)",
        None,
    ),
    Key::new(
        "listener",
        "one listener of that Gateway, by name (`sectionName`)",
        None,
    ),
    Key::new(
        "paths",
        "`{ \"/\": SERVICE => PORT }` (or `SERVICE:PORT`): one rule per path, a `PathPrefix` match, the Service's port by name or number, or its first (required)",
        None,
    ),
    Key::new("labels", "labels of this object alone", None),
    Key::new("annotations", "annotations of this object alone", None),
];

/// An `http_route` read, waiting for the app's Services.
pub(super) struct Pending {
    name: Name,
    keyword: Sp,
    host: Option<Spanned<String>>,
    gateway: Option<Name>,
    gateway_namespace: Option<Spanned<String>>,
    listener: Option<Name>,
    paths: Vec<(Spanned<String>, Name, Option<PortRef>)>,
    labels: Labels,
    annotations: Labels,
    /// Where the item is (its name), for the blocks the route is made of.
    at: Loc,
}

/// `http_route NAME { … }`
pub(super) fn http_route(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("http_route {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let host = f
        .take("host")
        .and_then(|v| lw.str(v, format!("{owner} › host")));
    let gateway = match f.take("gateway") {
        Some(v) => lw.name(v, format!("{owner} › gateway")),
        None => {
            lw.fail(
                Code::MissingKey,
                item.keyword.sp,
                format!("{owner} needs `gateway:`"),
                "name the Gateway it attaches to: `gateway: public` (a `resource Gateway public { … }` or `external gateway public;`)",
            );
            None
        }
    };
    let gateway_namespace = f
        .take("gateway_namespace")
        .and_then(|v| lw.str(v, format!("{owner} › gateway_namespace")));
    let listener = f
        .take("listener")
        .and_then(|v| lw.name(v, format!("{owner} › listener")));
    let mut paths = Vec::new();
    match f.take("paths") {
        Some(v) => {
            let mut pf = Fields::of(lw, Some(v), format!("{owner} › paths"));
            for (k, backend) in pf.all() {
                let desc = format!("{owner} › path {}", k.text);
                let path = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
                if let Some((service, port)) = network::ingress_backend(lw, backend, &desc) {
                    paths.push((path, service, port));
                }
            }
        }
        None => lw.fail(
            Code::MissingKey,
            item.keyword.sp,
            format!("{owner} needs `paths:`"),
            "route paths to a Service's port: `paths: { \"/\": api => http }`",
        ),
    }
    let labels = f
        .take("labels")
        .map(|v| lw.labels(v, "labels"))
        .unwrap_or_default();
    let annotations = f
        .take("annotations")
        .map(|v| lw.labels(v, "annotations"))
        .unwrap_or_default();
    f.finish_keys(lw, HTTP_ROUTE);
    let at = name.at;
    lw.routes.push(Pending {
        name,
        keyword: item.keyword.sp,
        host,
        gateway,
        gateway_namespace,
        listener,
        paths,
        labels,
        annotations,
        at,
    });
}

/// Every `http_route` as a `resource` HTTPRoute, once the Services are known.
pub(super) fn resolve(lw: &mut Lower) {
    let pending = std::mem::take(&mut lw.routes);
    if pending.is_empty() {
        return;
    }
    let defined = std::mem::take(&mut lw.crds.defined);
    for route in pending {
        if let Some(o) = object(lw, route, &defined) {
            lw.app.resources.push(o);
        }
    }
    lw.crds.defined = defined;
}

fn object(lw: &mut Lower, r: Pending, defined: &[crd::Crd]) -> Option<CustomObject> {
    let owner = format!("http_route {}", r.name.v);
    let Found::One(crd, version) = crd::find(defined, KIND) else {
        lw.fail(
            Code::UnknownCustomKind,
            r.keyword,
            format!("{owner} is a {KIND}, which no CRD of the app defines"),
            "read the Gateway API's HTTPRoute CRD (its standard channel's `gateway.networking.k8s.io_httproutes.yaml`): `crds \"crds/\";`",
        );
        return None;
    };
    let str_at = |s: &Spanned<String>| BlockValue::Str(s.clone());
    let map = |entries: Vec<(&str, BlockValue)>| {
        BlockValue::Map(Block::new(
            r.at,
            entries
                .into_iter()
                .map(|(k, v)| (Spanned::new(k.to_string(), v.at()), v))
                .collect(),
        ))
    };
    let mut spec: Vec<(&str, BlockValue)> = Vec::new();
    if let Some(g) = &r.gateway {
        let mut parent = vec![("name", str_at(g))];
        if let Some(ns) = &r.gateway_namespace {
            parent.push(("namespace", str_at(ns)));
        }
        if let Some(l) = &r.listener {
            parent.push(("sectionName", str_at(l)));
        }
        spec.push(("parentRefs", BlockValue::List(g.at, vec![map(parent)])));
    }
    if let Some(h) = &r.host {
        spec.push(("hostnames", BlockValue::List(h.at, vec![str_at(h)])));
    }
    let mut rules = Vec::new();
    for (path, service, port) in &r.paths {
        let mut backend = vec![("name", str_at(service))];
        match port_number(lw, service, port.as_ref()) {
            Ok(Some(n)) => backend.push(("port", BlockValue::Int(n))),
            Ok(None) => {}
            // Said already: no backend, so no error about its port besides.
            Err(()) => backend.clear(),
        }
        let matched = map(vec![(
            "path",
            map(vec![
                (
                    "type",
                    BlockValue::Str(Spanned::new("PathPrefix".into(), path.at)),
                ),
                ("value", str_at(path)),
            ]),
        )]);
        let backends = match backend.is_empty() {
            true => Vec::new(),
            false => vec![map(backend)],
        };
        rules.push(map(vec![
            ("matches", BlockValue::List(path.at, vec![matched])),
            ("backendRefs", BlockValue::List(service.at, backends)),
        ]));
    }
    spec.push(("rules", BlockValue::List(r.at, rules)));
    let BlockValue::Map(fields) = map(vec![("spec", map(spec))]) else {
        return None;
    };
    let mut out = Vec::new();
    check_object::<&Node>(&fields, &version.schema, &owner, &["metadata"], &mut out);
    for d in out {
        let sp = lw.span_at(d.at);
        lw.fail(d.code, sp, d.message, d.help);
    }
    Some(CustomObject {
        name: r.name,
        api_version: format!("{}/{}", crd.group, version.name),
        kind: crd.kind.clone(),
        crd: crd.name.clone(),
        namespaced: crd.namespaced,
        labels: r.labels,
        annotations: r.annotations,
        fields,
        schema: None,
        shortcut: Some("http_route".into()),
    })
}

/// The number of the Service port a path names (by name or number; none: the Service's first). `None`
/// when the Service is not the app's (the route's reference check says so); an error (reported) when it
/// has no such port.
fn port_number(
    lw: &mut Lower,
    service: &Name,
    port: Option<&PortRef>,
) -> Result<Option<Spanned<i64>>, ()> {
    if let Some(PortRef::Number(n)) = port {
        return Ok(Some(n.clone()));
    }
    let app = &lw.app;
    let s = app
        .services
        .iter()
        .chain(&app.included_services)
        .find(|s| s.name.v == service.v);
    let Some(s) = s else {
        if app.is_external(ExternalKind::Service, &service.v) {
            let at = match port {
                Some(PortRef::Name(n)) => n.at,
                _ => service.at,
            };
            let sp = lw.span_at(at);
            lw.fail(
                Code::UnknownServicePort,
                sp,
                format!(
                    "the ports of external Service `{}` are not known",
                    service.v
                ),
                format!("give the port by number: `{} => 443`", service.v),
            );
            return Err(());
        }
        return Ok(None);
    };
    // The DSL's ports, then those written in `spec: { ports }`.
    let written = s.spec_ports().unwrap_or_default();
    let ports: Vec<(&str, &Spanned<i64>)> = s
        .ports
        .iter()
        .map(|p| (p.name.v.as_str(), &p.port))
        .chain(
            written
                .iter()
                .map(|(n, p)| (n.map(|n| n.v.as_str()).unwrap_or(""), *p)),
        )
        .collect();
    let found = match port {
        Some(PortRef::Name(n)) => ports.iter().find(|(name, _)| *name == n.v),
        _ => ports.first(),
    };
    if let Some((_, number)) = found {
        let at = match port {
            Some(PortRef::Name(n)) => n.at,
            _ => service.at,
        };
        return Ok(Some(Spanned::new(number.v, at)));
    }
    let names: Vec<&str> = ports
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !n.is_empty())
        .collect();
    let (at, message, help) = match port {
        Some(PortRef::Name(n)) => (
            n.at,
            format!("Service `{}` has no port named `{}`", s.name.v, n.v),
            match did_you_mean(&n.v, names.iter().copied()) {
                Some(d) => format!("did you mean `{d}`?"),
                None if names.is_empty() => {
                    "name the Service's ports: `ports: { http: 80 => http }`, or give the number"
                        .into()
                }
                None => format!("its ports: {}", piceli_core::validate::list(&names)),
            },
        ),
        _ => (
            service.at,
            format!("Service `{}` has no port to route to", s.name.v),
            "give it a port: `port: 80 => http`".into(),
        ),
    };
    let sp = lw.span_at(at);
    lw.fail(Code::UnknownServicePort, sp, message, help);
    Err(())
}
