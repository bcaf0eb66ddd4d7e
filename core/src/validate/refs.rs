//! References between declarations: Services, Ingresses, policies, autoscalers, RBAC and checks.

use super::Ctx;
use super::pods::{one_of, port_number};
use crate::codes::Code;
use crate::model::{
    App, CheckKind, ExternalKind, PortRef, Service, ServiceType, Subject, Workload,
};
use crate::rules;
use crate::spanned::{Name, Spanned};
use std::collections::HashMap;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    services(cx, app);
    network_policies(cx, app);
    ingresses(cx, app);
    scaling(cx, app);
    rbac(cx, app);
    checks(cx, app);
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

fn scaling(cx: &mut Ctx, app: &App) {
    for a in &app.autoscalers {
        if let Some(w) = workload(cx, app, &a.scales)
            && !w.kind.scalable()
        {
            cx.error(
                Code::NotScalable,
                a.scales.at,
                format!(
                    "`{}` is a {}, which cannot be autoscaled",
                    w.name.v,
                    w.kind.kind()
                ),
                "autoscale a deployment or stateful_set",
            );
        }
        let (min, max) = (cx.known(&a.min).copied(), cx.known(&a.max).copied());
        if let Some(m) = min
            && m < 1
        {
            cx.error(
                Code::BadBounds,
                a.min.at,
                format!("min is {m}"),
                "an autoscaler's min is at least 1",
            );
        }
        if let (Some(lo), Some(hi)) = (min, max)
            && hi < lo
        {
            cx.error(
                Code::BadBounds,
                a.max.at,
                format!("max {hi} is below min {lo}"),
                format!("set max to at least {lo}"),
            );
        }
        for p in [&a.cpu_percent, &a.memory_percent].into_iter().flatten() {
            if let Some(&v) = cx.known(p)
                && v < 1
            {
                cx.error(
                    Code::BadBounds,
                    p.at,
                    format!("target utilization {v}%"),
                    "use a percentage above 0, e.g. 70",
                );
            }
        }
        if a.cpu_percent.is_none() && a.memory_percent.is_none() {
            cx.error(
                Code::MissingKey,
                a.name.at,
                format!("autoscaler `{}` has no metric", a.name.v),
                "add `cpu: 70` (target average CPU utilization, percent) or `memory: 80`",
            );
        }
    }
    for d in &app.disruption_budgets {
        let w = workload(cx, app, &d.protects);
        match (&d.min_available, &d.max_unavailable) {
            (Some(_), Some(m)) => cx.error(
                Code::BadBounds,
                m.at,
                "both min_available and max_unavailable are set",
                "set only one of them",
            ),
            (None, None) => cx.error(
                Code::MissingKey,
                d.name.at,
                format!(
                    "disruption budget `{}` sets neither min_available nor max_unavailable",
                    d.name.v
                ),
                "add `min_available: 1` or `max_unavailable: \"25%\"`",
            ),
            _ => {}
        }
        for v in [&d.min_available, &d.max_unavailable].into_iter().flatten() {
            if let Some(text) = cx.known(v) {
                let verdict = rules::percent_or_int(text).map(|_| ());
                cx.rule(Code::BadBounds, v.at, verdict);
            }
        }
        if let (Some(w), Some(min)) = (w, &d.min_available)
            && let Some(Ok(n)) = cx.known(min).map(|t| t.parse::<i64>())
            && let Some(r) = &w.replicas
            && let Some(&replicas) = cx.known(r)
            && n > replicas
            && !app.autoscalers.iter().any(|a| a.scales.v == w.name.v)
        {
            cx.error(
                Code::BadBounds,
                min.at,
                format!(
                    "min_available {n} is above the {replicas} replicas of `{}`",
                    w.name.v
                ),
                "no pod could ever be evicted; lower min_available or raise replicas",
            );
        }
    }
}

fn rbac(cx: &mut Ctx, app: &App) {
    let accounts = || {
        let declared = app.service_accounts.iter().map(|s| s.name.v.as_str());
        declared.chain(super::pods::externals(app, ExternalKind::ServiceAccount))
    };
    for w in &app.workloads {
        if let Some(sa) = &w.service_account
            && !accounts().any(|a| a == sa.v)
        {
            cx.unknown(Code::UnknownRole, "service_account", sa, accounts());
        }
    }
    for r in &app.roles {
        for rule in &r.rules {
            for v in &rule.verbs {
                one_of(cx, v, crate::model::RBAC_VERBS, "verb");
            }
            if rule.verbs.is_empty() || rule.resources.is_empty() {
                cx.error(
                    Code::MissingKey,
                    r.name.at,
                    format!("a rule of `{}` has no verbs or no resources", r.name.v),
                    "write `rule(groups: [\"\"], resources: [\"pods\"], verbs: [\"get\", \"list\"])`",
                );
            }
        }
    }
    for b in &app.role_bindings {
        if b.external_cluster_role {
            if app.roles.iter().any(|r| r.cluster && r.name.v == b.role.v) {
                cx.error(
                    Code::InvalidValue,
                    b.role.at,
                    format!(
                        "cluster_role `{}` is declared by the app, so it is not someone else's",
                        b.role.v
                    ),
                    format!("write `role: {}`", b.role.v),
                );
            } else if b.role.v.is_empty() {
                cx.error(
                    Code::InvalidValue,
                    b.role.at,
                    "the ClusterRole's name is empty",
                    "write the name of an existing ClusterRole, e.g. `role: cluster_role(\"view\")`",
                );
            }
        }
        let role_ok = b.external_cluster_role
            || app
                .roles
                .iter()
                .any(|r| r.name.v == b.role.v && (r.cluster || !b.cluster));
        if !role_ok {
            let candidates = app
                .roles
                .iter()
                .filter(|r| r.cluster || !b.cluster)
                .map(|r| r.name.v.as_str());
            cx.unknown(
                Code::UnknownRole,
                if b.cluster { "cluster_role" } else { "role" },
                &b.role,
                candidates,
            );
        }
        for subject in &b.subjects {
            match subject {
                Subject::Account(s) => {
                    if !accounts().any(|a| a == s.v) {
                        cx.unknown(Code::UnknownRole, "service_account", s, accounts());
                    }
                }
                Subject::User(who) | Subject::Group(who) if who.v.is_empty() => cx.error(
                    Code::InvalidValue,
                    who.at,
                    "the subject's name is empty",
                    "write the name the cluster's authentication gives, e.g. `user(\"jane@example.com\")`",
                ),
                Subject::User(_) | Subject::Group(_) => {}
                Subject::ForeignAccount { namespace, name } => {
                    cx.rule(
                        Code::InvalidValue,
                        namespace.at,
                        rules::names::dns1123_label(&namespace.v),
                    );
                    cx.rule(
                        Code::InvalidValue,
                        name.at,
                        rules::names::dns1123_subdomain(&name.v),
                    );
                }
            }
        }
    }
}

fn checks(cx: &mut Ctx, app: &App) {
    for c in &app.checks {
        for d in [&c.timeout, &c.interval].into_iter().flatten() {
            let verdict = rules::duration(&d.v).map(|_| ());
            cx.rule(Code::InvalidValue, d.at, verdict);
        }
        if let Some(r) = &c.retries
            && let Some(&n) = cx.known(r)
            && n < 0
        {
            cx.error(
                Code::BadBounds,
                r.at,
                format!("retries is {n}"),
                "use 0 or more",
            );
        }
        match &c.kind {
            CheckKind::Http {
                target,
                port,
                path,
                method,
                expect,
                ..
            } => {
                forward_target(cx, app, target, port.as_ref());
                cx.rule(Code::InvalidPath, path.at, rules::http_path(&path.v));
                if let Some(m) = method {
                    one_of(
                        cx,
                        m,
                        &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
                        "HTTP method",
                    );
                }
                status(cx, expect);
            }
            CheckKind::Metric {
                target,
                port,
                path,
                min,
                max,
                ..
            } => {
                forward_target(cx, app, target, port.as_ref());
                cx.rule(Code::InvalidPath, path.at, rules::http_path(&path.v));
                if min.is_none() && max.is_none() {
                    cx.error(
                        Code::MissingKey,
                        c.name.at,
                        "a metric check needs `min:` or `max:`",
                        "add `min: 1` or `max: 0.5`",
                    );
                }
            }
            CheckKind::Exec {
                workload: w,
                command,
                ..
            } => {
                workload(cx, app, w);
                if command.is_empty() {
                    cx.error(
                        Code::MissingKey,
                        w.at,
                        "an exec check has an empty command",
                        "give the command, e.g. `[\"pg_isready\"]`",
                    );
                }
            }
            CheckKind::Code { .. } => {}
        }
    }
}

fn status(cx: &mut Ctx, expect: &Spanned<i64>) {
    if let Some(&s) = cx.known(expect)
        && !(100..=599).contains(&s)
    {
        cx.error(
            Code::InvalidValue,
            expect.at,
            format!("{s} is not an HTTP status"),
            "expect a status from 100 to 599, e.g. 200",
        );
    }
}

/// A check's target: a declared Service (port = a Service port) or workload (port = a container port).
fn forward_target(cx: &mut Ctx, app: &App, target: &Name, port: Option<&PortRef>) {
    if let Some(s) = app.service(&target.v) {
        if let Some(p) = port {
            service_port(cx, s, p);
        }
    } else if let Some(w) = app.workload(&target.v) {
        if let Some(p) = port {
            workload_port(cx, w, p, Code::UnknownTargetPort);
        }
    } else {
        let candidates = app
            .services
            .iter()
            .chain(&app.included_services)
            .map(|s| s.name.v.as_str())
            .chain(app.workloads.iter().map(|w| w.name.v.as_str()));
        cx.unknown(
            Code::UnknownService,
            "Service or workload",
            target,
            candidates,
        );
    }
}
