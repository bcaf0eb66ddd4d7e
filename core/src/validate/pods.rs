//! Pod templates: containers, images, ports, env, resources, probes, volumes and mounts.

use super::Ctx;
use super::names::duplicates;
use crate::codes::Code;
use crate::model::{
    App, Container, EnvFrom, EnvValue, EnvVar, ExternalKind, PortRef, ProbeAction, VolumeSource,
    Workload,
};
use crate::rules::{self, Quantity};
use crate::spanned::{Loc, Name, Spanned};
use std::collections::HashMap;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for w in &app.workloads {
        workload(cx, app, w);
    }
    for p in &app.pvcs {
        memory(cx, &p.storage);
        for m in &p.access_modes {
            one_of(cx, m, ACCESS_MODES, "access mode");
        }
    }
}

fn workload(cx: &mut Ctx, app: &App, w: &Workload) {
    if let Some(r) = &w.replicas
        && let Some(&n) = cx.known(r)
        && n < 0
    {
        cx.error(
            Code::BadBounds,
            r.at,
            format!("replicas is {n}"),
            "replicas must be 0 or more",
        );
    }
    if let Some(s) = &w.schedule {
        cx.rule(Code::InvalidSchedule, s.at, rules::cron_schedule(&s.v));
    }
    if let Some(p) = &w.restart_policy {
        one_of(cx, p, &["Never", "OnFailure"], "restart policy");
    }
    non_negative(cx, [&w.backoff_limit, &w.completions, &w.parallelism]);
    duplicates_containers(cx, w);
    for v in &w.volumes {
        match &v.source {
            VolumeSource::ConfigMap(n) => config_map_ref(cx, app, n),
            VolumeSource::Secret(n) => secret_ref(cx, app, n),
            VolumeSource::Pvc(n) => {
                let known = app.pvcs.iter().map(|p| p.name.v.as_str());
                let names = known.chain(externals(app, ExternalKind::Pvc));
                if !names.clone().any(|p| p == n.v) {
                    cx.unknown(Code::UnknownVolume, "pvc", n, names);
                }
            }
            VolumeSource::EmptyDir {
                size_limit: Some(q),
                ..
            } => memory(cx, q),
            _ => {}
        }
    }
    for c in &w.volume_claims {
        memory(cx, &c.storage);
        for m in &c.access_modes {
            one_of(cx, m, ACCESS_MODES, "access mode");
        }
    }
    let volumes: Vec<&str> = w
        .volumes
        .iter()
        .map(|v| v.name.v.as_str())
        .chain(w.volume_claims.iter().map(|c| c.name.v.as_str()))
        .collect();
    for c in w.containers.iter().chain(&w.init_containers) {
        container(cx, app, c, &volumes);
        for e in &c.env_from {
            match e {
                EnvFrom::ConfigMap(n) => config_map_ref(cx, app, n),
                EnvFrom::Secret(n) => secret_ref(cx, app, n),
            }
        }
    }
}

/// The access modes a claim may ask for.
pub(super) const ACCESS_MODES: &[&str] = &[
    "ReadWriteOnce",
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOncePod",
];

fn duplicates_containers(cx: &mut Ctx, w: &Workload) {
    let all = w.containers.iter().chain(&w.init_containers);
    let mut seen: HashMap<&str, Loc> = HashMap::new();
    for c in all {
        if let Some(&first) = seen.get(c.name.v.as_str()) {
            cx.declared_twice(
                Code::DuplicateContainer,
                c.name.at,
                first,
                format!(
                    "container `{}` is declared twice in `{}`",
                    c.name.v, w.name.v
                ),
                "rename one of the containers",
            );
        } else {
            seen.insert(c.name.v.as_str(), c.name.at);
        }
    }
    // Port names and numbers are unique across the pod's containers.
    let mut names: HashMap<&str, Loc> = HashMap::new();
    let mut numbers: HashMap<(i64, &str), Loc> = HashMap::new();
    for p in w.containers.iter().flat_map(|c| &c.ports) {
        if p.name.v.is_empty() {
            // A port without a name (`ports: [8080]`).
        } else if let Some(&first) = names.get(p.name.v.as_str()) {
            cx.declared_twice(
                Code::DuplicatePort,
                p.name.at,
                first,
                format!(
                    "port name `{}` is declared twice in `{}`",
                    p.name.v, w.name.v
                ),
                "give each port its own name",
            );
        } else {
            names.insert(p.name.v.as_str(), p.name.at);
        }
        let proto = p.protocol.as_ref().map(|s| s.v.as_str()).unwrap_or("TCP");
        if let Some(&n) = cx.known(&p.number)
            && let Some(&first) = numbers.get(&(n, proto))
        {
            cx.declared_twice(
                Code::DuplicatePort,
                p.number.at,
                first,
                format!("port {n}/{proto} is declared twice in `{}`", w.name.v),
                "remove the duplicate port",
            );
        } else if let Some(&n) = cx.known(&p.number) {
            numbers.insert((n, proto), p.number.at);
        }
    }
}

fn container(cx: &mut Ctx, app: &App, c: &Container, volumes: &[&str]) {
    cx.rule(
        Code::InvalidName,
        c.name.at,
        rules::dns1123_label(&c.name.v),
    );
    if let Some(image) = cx.known(&c.image)
        && app.build_of(image).is_none()
    {
        match rules::parse_image(image) {
            Err(e) => cx.error(Code::InvalidImage, c.image.at, e.message, e.help),
            Ok(parsed) if parsed.digest.is_none() && !c.unpinned => {
                let verdict = rules::require_digest(image);
                cx.rule(Code::ImageNotPinned, c.image.at, verdict);
            }
            Ok(_) => {}
        }
    }
    if let Some(p) = &c.pull_policy {
        one_of(cx, p, &["Always", "IfNotPresent", "Never"], "pull policy");
    }
    for p in c.ports.iter() {
        if !p.name.v.is_empty() {
            cx.rule(
                Code::InvalidPortName,
                p.name.at,
                rules::port_name(&p.name.v),
            );
        }
        port_number(cx, &p.number);
        if let Some(proto) = &p.protocol {
            one_of(cx, proto, &["TCP", "UDP", "SCTP"], "protocol");
        }
    }
    env(cx, app, &c.env, &format!("container `{}`", c.name.v));
    resources(cx, c);
    for probe in [&c.readiness, &c.liveness, &c.startup]
        .into_iter()
        .flatten()
    {
        match &probe.action {
            ProbeAction::Http { path, port } => {
                if let Some(p) = cx.known(path) {
                    cx.rule(Code::InvalidPath, path.at, rules::http_path(p));
                }
                probe_port(cx, c, port);
            }
            ProbeAction::Tcp { port } => probe_port(cx, c, port),
            ProbeAction::Exec { command } if command.is_empty() => cx.error(
                Code::MissingKey,
                c.name.at,
                "an exec probe has an empty command",
                "give the command to run, e.g. `exec([\"cat\", \"/tmp/ready\"])`",
            ),
            ProbeAction::Exec { .. } => {}
        }
        non_negative(
            cx,
            [
                &probe.initial_delay,
                &probe.period,
                &probe.timeout,
                &probe.failure_threshold,
            ],
        );
    }
    let mut paths: HashMap<&str, ()> = HashMap::new();
    for m in &c.mounts {
        cx.rule(
            Code::MountPathNotAbsolute,
            m.path.at,
            rules::absolute_path(&m.path.v),
        );
        if paths.insert(m.path.v.as_str(), ()).is_some() {
            cx.error(
                Code::DuplicateMountPath,
                m.path.at,
                format!(
                    "`{}` is mounted twice in container `{}`",
                    m.path.v, c.name.v
                ),
                "mount each path once",
            );
        }
        if !volumes.contains(&m.volume.v.as_str()) {
            cx.unknown(
                Code::UnknownVolume,
                "volume",
                &m.volume,
                volumes.iter().copied(),
            );
        }
    }
}

/// An environment list (a container's, the operator's, named `owner` in messages): valid names,
/// references to what exists, then each name set once.
pub(super) fn env(cx: &mut Ctx, app: &App, env: &[EnvVar], owner: &str) {
    for e in env {
        cx.rule(
            Code::InvalidEnvName,
            e.name.at,
            rules::env_var_name(&e.name.v),
        );
        env_ref(cx, app, &e.value);
    }
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for e in env {
        if seen.insert(e.name.v.as_str(), ()).is_some() {
            cx.error(
                Code::DuplicateEnv,
                e.name.at,
                format!("`{}` is set twice in {owner}", e.name.v),
                "remove one of them: the later one would silently win",
            );
        }
    }
}

fn env_ref(cx: &mut Ctx, app: &App, value: &EnvValue) {
    match value {
        EnvValue::ConfigMapKey { config_map, key } => {
            match app.config_maps.iter().find(|c| c.name.v == config_map.v) {
                // The keys of an object someone else makes are theirs: only its name is checked.
                None => config_map_ref(cx, app, config_map),
                Some(c) => key_ref(cx, key, "key of ConfigMap", c.data.iter().map(|(k, _)| k)),
            }
        }
        EnvValue::SecretKey { secret, key } => {
            match app.secrets.iter().find(|s| s.name.v == secret.v) {
                None => secret_ref(cx, app, secret),
                Some(s) => {
                    // A TLS generator's key K is referred to by the keys it fills (K.crt, K.key).
                    let keys: Vec<Name> = s
                        .data_keys()
                        .into_iter()
                        .map(|(k, i)| crate::spanned::Spanned::new(k, s.data[i].0.at))
                        .collect();
                    key_ref(cx, key, "key of Secret", keys.iter())
                }
            }
        }
        EnvValue::Literal(_) | EnvValue::Field(_) => {}
    }
}

/// The names declared `external KIND NAME;` of one kind.
pub(super) fn externals(app: &App, kind: ExternalKind) -> impl Iterator<Item = &str> + Clone {
    app.externals
        .iter()
        .filter(move |e| e.kind == kind)
        .map(|e| e.name.v.as_str())
}

/// A reference to a ConfigMap by name: declared, or `external config_map`.
pub(super) fn config_map_ref(cx: &mut Ctx, app: &App, name: &Name) {
    let declared = app.config_maps.iter().map(|c| c.name.v.as_str());
    let names = declared.chain(externals(app, ExternalKind::ConfigMap));
    if !names.clone().any(|n| n == name.v) {
        cx.unknown(Code::UnknownConfigRef, "ConfigMap", name, names);
    }
}

/// A reference to a Secret by name: declared, or `external secret`.
pub(super) fn secret_ref(cx: &mut Ctx, app: &App, name: &Name) {
    let declared = app.secrets.iter().map(|s| s.name.v.as_str());
    // A Secret a custom resource makes (a cert-manager Certificate's `secretName`) is known too.
    let names = declared
        .chain(externals(app, ExternalKind::Secret))
        .chain(super::refs::custom::made_secrets(app));
    if !names.clone().any(|n| n == name.v) {
        cx.unknown(Code::UnknownConfigRef, "Secret", name, names);
    }
}

fn key_ref<'a>(cx: &mut Ctx, key: &Name, what: &str, keys: impl Iterator<Item = &'a Name> + Clone) {
    if !keys.clone().any(|k| k.v == key.v) {
        cx.unknown(
            Code::UnknownConfigRef,
            what,
            key,
            keys.map(|k| k.v.as_str()),
        );
    }
}

fn resources(cx: &mut Ctx, c: &Container) {
    let mut parsed: HashMap<(&str, bool), (Quantity, &Spanned<String>)> = HashMap::new();
    for (is_limit, list) in [(false, &c.resources.requests), (true, &c.resources.limits)] {
        duplicates(
            cx,
            if is_limit { "limit" } else { "request" },
            list.iter().map(|(k, _)| k),
        );
        for (name, value) in list {
            let Some(text) = cx.known(value) else {
                continue;
            };
            let verdict = match name.v.as_str() {
                "memory" | "ephemeral-storage" | "storage" => rules::memory_quantity(text),
                "cpu" => rules::cpu_quantity(text),
                _ => rules::parse_quantity(text),
            };
            match verdict {
                Ok(q) => {
                    parsed.insert((name.v.as_str(), is_limit), (q, value));
                }
                Err(e) => {
                    let code = if text.ends_with('m')
                        && name.v != "cpu"
                        && rules::parse_quantity(text).is_ok()
                    {
                        Code::MilliMemory
                    } else {
                        Code::InvalidQuantity
                    };
                    cx.error(code, value.at, e.message, e.help);
                }
            }
        }
    }
    for ((resource, is_limit), (request, at)) in &parsed {
        if *is_limit {
            continue;
        }
        if let Some((limit, limit_at)) = parsed.get(&(resource, true))
            && request > limit
        {
            cx.error(
                Code::RequestAboveLimit,
                at.at,
                format!(
                    "the {resource} request `{}` is above its limit `{}`",
                    at.v, limit_at.v
                ),
                format!(
                    "lower the request or raise the limit to at least `{}`",
                    at.v
                ),
            );
        }
    }
}

fn probe_port(cx: &mut Ctx, c: &Container, port: &PortRef) {
    match port {
        PortRef::Name(n) => {
            if !c.ports.iter().any(|p| p.name.v == n.v) {
                let help =
                    match rules::did_you_mean(&n.v, c.ports.iter().map(|p| p.name.v.as_str())) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "add `{}: PORT` to the ports of container `{}`",
                            n.v, c.name.v
                        ),
                    };
                cx.error(
                    Code::ProbePortNotExposed,
                    n.at,
                    format!("container `{}` exposes no port named `{}`", c.name.v, n.v),
                    help,
                );
            }
        }
        PortRef::Number(n) => {
            port_number(cx, n);
            if let Some(&num) = cx.known(n)
                && !c.ports.iter().any(|p| p.number.v == num)
            {
                cx.error(
                    Code::ProbePortNotExposed,
                    n.at,
                    format!("container `{}` exposes no port {num}", c.name.v),
                    "probe a port the container declares under `ports:`, by name",
                );
            }
        }
    }
}

/// Counts and durations that are given must be 0 or more.
fn non_negative<const N: usize>(cx: &mut Ctx, values: [&Option<Spanned<i64>>; N]) {
    for n in values.into_iter().flatten() {
        if let Some(&v) = cx.known(n)
            && v < 0
        {
            cx.error(
                Code::BadBounds,
                n.at,
                format!("{v} is negative"),
                "use 0 or more",
            );
        }
    }
}

pub(super) fn port_number(cx: &mut Ctx, n: &Spanned<i64>) {
    if let Some(&v) = cx.known(n) {
        let verdict = rules::port_number(v).map(|_| ());
        cx.rule(Code::PortOutOfRange, n.at, verdict);
    }
}

pub(super) fn memory(cx: &mut Ctx, q: &Spanned<String>) {
    if let Some(text) = cx.known(q)
        && let Err(e) = rules::storage_quantity(text)
    {
        let code = if text.ends_with('m') && rules::parse_quantity(text).is_ok() {
            Code::MilliMemory
        } else {
            Code::InvalidQuantity
        };
        cx.error(code, q.at, e.message, e.help);
    }
}

pub(super) fn one_of(cx: &mut Ctx, value: &Spanned<String>, allowed: &[&str], what: &str) {
    if let Some(v) = cx.known(value)
        && !allowed.contains(&v.as_str())
    {
        let help = match rules::did_you_mean(v, allowed.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("use one of {}", super::list(allowed)),
        };
        cx.error(
            Code::InvalidValue,
            value.at,
            format!("`{v}` is not a valid {what}"),
            help,
        );
    }
}
