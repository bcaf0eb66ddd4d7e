//! References between declarations: Services, Ingresses and network policies here; autoscalers, budgets and
//! RBAC in [`policy`]; checks in [`checks`].

mod checks;
pub mod custom;
mod policy;

use super::Ctx;
use super::pods::port_number;
use crate::codes::Code;
use crate::model::{App, ExternalKind, PortRef, Service, ServiceType, Workload};
use crate::rules;
use crate::spanned::Name;
use std::collections::HashMap;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    services(cx, app);
    network_policies(cx, app);
    ingresses(cx, app);
    policy::scaling(cx, app);
    policy::rbac(cx, app);
    checks::checks(cx, app);
    custom::check(cx, app);
}

fn workload<'a>(cx: &mut Ctx, app: &'a App, name: &Name) -> Option<&'a Workload> {
    // A declared workload, else one of an included file (`include yaml(…)`).
    let found = cx
        .workloads
        .get(&name.v)
        .map(|&i| &app.workloads[i])
        .or_else(|| app.included_workload(&name.v).map(|i| &i.workload));
    if found.is_none() {
        cx.unknown(
            Code::UnknownWorkload,
            "workload",
            name,
            app.workloads
                .iter()
                .chain(app.included_workloads.iter().map(|i| &i.workload))
                .map(|w| w.name.v.as_str()),
        );
    }
    found
}

fn service<'a>(cx: &mut Ctx, app: &'a App, name: &Name) -> Option<&'a Service> {
    let found = cx
        .services
        .get(&name.v)
        .map(|&i| &app.services[i])
        .or_else(|| app.included_services.iter().find(|s| s.name.v == name.v));
    if found.is_none() {
        cx.unknown(
            Code::UnknownService,
            "Service",
            name,
            app.services
                .iter()
                .chain(&app.included_services)
                .map(|s| s.name.v.as_str())
                .chain(
                    app.externals
                        .iter()
                        .filter(|e| e.kind == ExternalKind::Service)
                        .map(|e| e.name.v.as_str()),
                ),
        );
    }
    found
}

fn container_port_names(w: &Workload) -> impl Iterator<Item = &str> + Clone {
    w.containers
        .iter()
        .flat_map(|c| &c.ports)
        .map(|p| p.name.v.as_str())
}

/// A reference to a container port of a workload, by name or number.
fn workload_port(cx: &mut Ctx, w: &Workload, port: &PortRef, code: Code) {
    match port {
        PortRef::Name(n) => {
            if !container_port_names(w).any(|p| p == n.v) {
                let help = match rules::did_you_mean(&n.v, container_port_names(w)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("name one of the ports of `{}` under `ports:`", w.name.v),
                };
                cx.error(
                    code,
                    n.at,
                    format!("`{}` exposes no port named `{}`", w.name.v, n.v),
                    help,
                );
            }
        }
        PortRef::Number(n) => {
            port_number(cx, n);
            if let Some(&num) = cx.known(n)
                && !w
                    .containers
                    .iter()
                    .flat_map(|c| &c.ports)
                    .any(|p| p.number.v == num)
            {
                cx.error(
                    code,
                    n.at,
                    format!("`{}` exposes no port {num}", w.name.v),
                    "refer to a declared container port, preferably by name",
                );
            }
        }
    }
}

/// A Service port written without `=> target` forwards to the container port of the same number, so the
/// workload must expose it (`port: 81` on a workload with only port 80 would route nowhere).
fn same_number_target(cx: &mut Ctx, w: &Workload, s: &Service, p: &crate::model::ServicePort) {
    let Some(&num) = cx.known(&p.port) else {
        return;
    };
    let exposed: Vec<(&str, i64)> = w
        .containers
        .iter()
        .flat_map(|c| &c.ports)
        .map(|c| (c.name.v.as_str(), c.number.v))
        .collect();
    if exposed.iter().any(|&(_, n)| n == num) {
        return;
    }
    let help = match exposed.first() {
        Some((name, _)) => format!(
            "map it to a container port of `{}`: `port: {num} => {name}`, or declare port {num} under its `ports:`",
            w.name.v
        ),
        None => format!(
            "declare the port on `{}`: `ports: {{ http: {num} }}`",
            w.name.v
        ),
    };
    cx.error(
        Code::UnknownTargetPort,
        p.port.at,
        format!(
            "Service `{}` forwards port {num} to the same port of `{}`, which exposes no port {num}",
            s.name.v, w.name.v
        ),
        help,
    );
}

/// A reference to a port of a Service, by name or number.
fn service_port(cx: &mut Ctx, s: &Service, port: &PortRef) {
    if s.ports.is_empty() && s.spec.get("ports").is_some() {
        return super::services::spec_port(cx, s, port);
    }
    let ok = match port {
        PortRef::Name(n) => s.ports.iter().any(|p| p.name.v == n.v),
        PortRef::Number(n) => cx
            .known(n)
            .is_none_or(|&num| s.ports.iter().any(|p| p.port.v == num)),
    };
    if !ok {
        let (at, shown) = match port {
            PortRef::Name(n) => (n.at, n.v.clone()),
            PortRef::Number(n) => (n.at, n.v.to_string()),
        };
        let names: Vec<&str> = s.ports.iter().map(|p| p.name.v.as_str()).collect();
        cx.error(
            Code::UnknownServicePort,
            at,
            format!("Service `{}` has no port `{shown}`", s.name.v),
            format!("use one of {}", super::list(&names)),
        );
    }
}

fn services(cx: &mut Ctx, app: &App) {
    let mut local_ports: HashMap<i64, ()> = HashMap::new();
    for s in &app.services {
        if s.of_no_workload() {
            // Rendered as written: its own checks (it has no first-class ports or access).
            super::services::check(cx, s);
            continue;
        }
        let mut w = workload(cx, app, &s.selects);
        if let Some(job) = w.filter(|w| w.kind.runs_to_completion()) {
            cx.error(
                Code::ServiceOnJob,
                s.selects.at,
                format!(
                    "`{}` is a {}, whose pods run to completion: a Service cannot route to it",
                    job.name.v,
                    job.kind.keyword()
                ),
                "point the Service at a deployment, stateful_set or daemon_set",
            );
            w = None; // its ports are not checked: that would only repeat the problem
        }
        if s.ports.is_empty() && s.spec.get("ports").is_none() {
            cx.error(
                Code::MissingKey,
                s.name.at,
                format!("Service `{}` has no ports", s.name.v),
                "add `port: 80 => http` (Service port 80 to the container port named `http`), or list them in `spec: { ports: [ … ] }`",
            );
        }
        super::names::duplicates(
            cx,
            "Service port",
            s.ports.iter().map(|p| &p.name).filter(|n| !n.v.is_empty()),
        );
        let mut numbers: HashMap<i64, ()> = HashMap::new();
        for p in &s.ports {
            if p.name.v.is_empty() {
                // `port: 80 => 8080`: a Service of one port needs no name; of more, each needs one.
                if s.ports.len() > 1 {
                    cx.error(
                        Code::InvalidPortName,
                        p.port.at,
                        format!(
                            "Service `{}` has {} ports, so each needs a name (the API server requires it)",
                            s.name.v,
                            s.ports.len()
                        ),
                        "name them: `ports: { http: 80 => 8080, metrics: 9090 => 9090 }`",
                    );
                }
            } else {
                cx.rule(
                    Code::InvalidPortName,
                    p.name.at,
                    rules::port_name(&p.name.v),
                );
            }
            port_number(cx, &p.port);
            if let Some(&n) = cx.known(&p.port)
                && numbers.insert(n, ()).is_some()
            {
                cx.error(
                    Code::DuplicatePort,
                    p.port.at,
                    format!("port {n} is declared twice in Service `{}`", s.name.v),
                    "give each Service port its own number",
                );
            }
            match (w, &p.target) {
                (Some(w), Some(target)) => workload_port(cx, w, target, Code::UnknownTargetPort),
                (Some(w), None) => same_number_target(cx, w, s, p),
                (None, _) => {}
            }
            if let Some(np) = &p.node_port {
                if let Some(&n) = cx.known(np) {
                    cx.rule(Code::PortOutOfRange, np.at, rules::node_port(n).map(|_| ()));
                }
                if matches!(
                    s.service_type,
                    ServiceType::ClusterIp | ServiceType::Headless
                ) {
                    cx.error(
                        Code::InvalidValue,
                        np.at,
                        format!(
                            "Service `{}` is not a NodePort or LoadBalancer Service",
                            s.name.v
                        ),
                        "add `type: node_port` or remove the node port",
                    );
                }
            }
        }
        if let Some(a) = &s.access {
            if let Some(&n) = cx.known(&a.local_port) {
                cx.rule(
                    Code::PortOutOfRange,
                    a.local_port.at,
                    rules::port_number(n).map(|_| ()),
                );
                if local_ports.insert(n, ()).is_some() {
                    cx.error(
                        Code::DuplicateLocalPort,
                        a.local_port.at,
                        format!("local port {n} is already used by another access forward"),
                        "pick another local port",
                    );
                }
            }
            if let Some(p) = &a.port {
                service_port(cx, s, &PortRef::Name(p.clone()));
            }
            if let Some(h) = &a.health {
                cx.rule(Code::InvalidPath, h.at, rules::http_path(&h.v));
            }
        }
    }
    for w in &app.workloads {
        if let Some(sn) = &w.service_name
            && let Some(s) = service(cx, app, sn)
            && s.selects.v != w.name.v
        {
            let message = if s.of_no_workload() {
                // `service NAME { spec: { … } }`: it selects no workload of the app.
                format!(
                    "Service `{}` is declared without `-> WORKLOAD`, so it does not select `{}`",
                    s.name.v, w.name.v
                )
            } else {
                format!(
                    "Service `{}` selects `{}`, not `{}`",
                    s.name.v, s.selects.v, w.name.v
                )
            };
            cx.error(
                Code::UnknownService,
                sn.at,
                message,
                format!(
                    "a StatefulSet's governing Service must select it: `service {} -> {} {{ … }}`",
                    s.name.v, w.name.v
                ),
            );
        }
    }
}

fn network_policies(cx: &mut Ctx, app: &App) {
    for n in app.network_policies.iter().filter(|n| n.selector.is_none()) {
        let w = workload(cx, app, &n.applies_to);
        for from in &n.from_workloads {
            workload(cx, app, from);
        }
        for ns in &n.from_namespaces {
            cx.rule(Code::InvalidName, ns.at, rules::dns1123_label(&ns.v));
        }
        if let Some(w) = w {
            for p in &n.ports {
                workload_port(cx, w, p, Code::UnknownTargetPort);
            }
        }
    }
}

fn ingresses(cx: &mut Ctx, app: &App) {
    for i in &app.ingresses {
        // A `spec: { defaultBackend }` of another kind (a resource backend) also routes every request.
        let default = i.default_backend.is_some() || i.spec.get("defaultBackend").is_some();
        // Rules written as the API's (`spec: { rules: [ … ] }`, what `import` writes for rules the DSL
        // cannot say) route as the DSL's do.
        let spec_rules =
            matches!(
                i.spec.get("rules"),
                Some(crate::model::BlockValue::List(_, rules)) if !rules.is_empty()
            ) || matches!(i.spec.get("rules"), Some(crate::model::BlockValue::Json(_)));
        if i.paths.is_empty() && !default && !spec_rules {
            cx.error(
                Code::MissingKey,
                i.name.at,
                format!("Ingress `{}` has no paths and no default backend", i.name.v),
                "add `paths: { \"/\": web => http }`, `rules: { \"host\": { \"/\": web => http } }`, `default: web => http`, or the API's rules in `spec: { rules: [ … ] }`",
            );
        }
        for t in i
            .path_type
            .iter()
            .chain(i.paths.iter().filter_map(|p| p.path_type.as_ref()))
        {
            super::pods::one_of(
                cx,
                t,
                &["Prefix", "Exact", "ImplementationSpecific"],
                "path type",
            );
        }
        if let Some(t) = &i.tls_secret {
            super::pods::secret_ref(cx, app, t);
        }
        for t in &i.tls {
            super::pods::secret_ref(cx, app, &t.secret);
        }
        for h in i
            .host
            .iter()
            .chain(i.paths.iter().filter_map(|p| p.host.as_ref()))
            .chain(i.tls.iter().flat_map(|t| &t.hosts))
        {
            if let Some(host) = cx.known(h) {
                let bare = host.strip_prefix("*.").unwrap_or(host);
                cx.rule(Code::InvalidName, h.at, rules::dns1123_subdomain(bare));
            }
        }
        for p in &i.paths {
            cx.rule(Code::InvalidPath, p.path.at, rules::http_path(&p.path.v));
            ingress_backend(cx, app, &p.service, p.port.as_ref());
        }
        if let Some(d) = &i.default_backend {
            ingress_backend(cx, app, &d.service, d.port.as_ref());
        }
    }
}

/// An Ingress backend: a declared Service and one of its ports, or an `external service` and the port it
/// names (its ports are someone else's).
fn ingress_backend(cx: &mut Ctx, app: &App, service_name: &Name, port: Option<&PortRef>) {
    if app.is_external(ExternalKind::Service, &service_name.v) {
        if port.is_none() {
            cx.error(
                Code::UnknownServicePort,
                service_name.at,
                format!(
                    "Service `{}` is external, so its ports are not known",
                    service_name.v
                ),
                format!(
                    "name the port: `{} => 80` or `{} => http`",
                    service_name.v, service_name.v
                ),
            );
        }
        return;
    }
    if let Some(s) = service(cx, app, service_name)
        && let Some(port) = port
    {
        service_port(cx, s, port);
    }
}
