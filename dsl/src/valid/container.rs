//! Lowering a container's values: env and env_from, ports, resources, probes, mounts, command and args
//! (its keys and their readers: `container_keys.rs`).

use super::{Fields, Lower};
use crate::ast::Value;
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::Spanned;

pub(super) fn env(lw: &mut Lower, v: &Value, owner: &str) -> Vec<EnvVar> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › env"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › env {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let value = match val {
            Value::Call(_) => {
                let Some(call) = lw.call(val, &["config", "secret", "field"], "secret(api.key)")
                else {
                    continue;
                };
                let Some(arg) = lw.arg(call, 0, "what to read", "secret(api.key)") else {
                    continue;
                };
                match call.name.text.as_str() {
                    "config" => match lw.dotted(arg, &desc, "config(settings.MODE)") {
                        Some((config_map, key)) => EnvValue::ConfigMapKey { config_map, key },
                        None => continue,
                    },
                    "secret" => match lw.dotted(arg, &desc, "secret(api.key)") {
                        Some((secret, key)) => EnvValue::SecretKey { secret, key },
                        None => continue,
                    },
                    _ => match lw.str(arg, desc) {
                        Some(s) => EnvValue::Field(s),
                        None => continue,
                    },
                }
            }
            _ => match lw.text(val, desc) {
                Some(s) => EnvValue::Literal(s),
                None => continue,
            },
        };
        out.push(EnvVar { name, value });
    }
    out
}

/// `env_from: [config(settings), secret(db)]`.
pub(super) fn env_from(lw: &mut Lower, v: &Value, owner: &str) -> Vec<EnvFrom> {
    let items: Vec<&Value> = match v {
        Value::List(items, _) => items.iter().collect(),
        other => vec![other],
    };
    let desc = format!("{owner} › env_from");
    let mut out = Vec::new();
    for i in items {
        let Some(call) = lw.call(i, &["config", "secret"], "config(settings)") else {
            continue;
        };
        lw.max_args(call, 1, "config(settings)");
        let Some(arg) = lw.arg(call, 0, "the name", "secret(db)") else {
            continue;
        };
        let Some(name) = lw.name(arg, desc.clone()) else {
            continue;
        };
        out.push(if call.name.text == "config" {
            EnvFrom::ConfigMap(name)
        } else {
            EnvFrom::Secret(name)
        });
    }
    out
}

/// `ports: { http: 8000, dns: port(53, protocol: "UDP") }` (named), or `ports: [8000, port(53, protocol:
/// "UDP")]`: ports without names, rendered without one (as a manifest that gave none).
pub(super) fn ports(lw: &mut Lower, v: &Value, owner: &str) -> Vec<ContainerPort> {
    let mut out = Vec::new();
    if let Value::List(items, _) = v {
        for item in items {
            let desc = format!("{owner} › ports");
            let name = Spanned::new(String::new(), lw.loc(item.sp(), desc.clone()));
            if let Some((number, protocol)) = port_number(lw, item, desc) {
                out.push(ContainerPort {
                    name,
                    number,
                    protocol,
                });
            }
        }
        return out;
    }
    let mut f = Fields::of(lw, Some(v), format!("{owner} › ports"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › port {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        if let Some((number, protocol)) = port_number(lw, val, desc) {
            out.push(ContainerPort {
                name,
                number,
                protocol,
            });
        }
    }
    out
}

/// One container port's value: `8000`, or `port(53, protocol: "UDP")`.
fn port_number(
    lw: &mut Lower,
    val: &Value,
    desc: String,
) -> Option<(Spanned<i64>, Option<Spanned<String>>)> {
    let (number, protocol) = match val {
        Value::Call(_) => {
            let call = lw.call(val, &["port"], "port(53, protocol: \"UDP\")")?;
            let number = lw
                .arg(call, 0, "the port number", "port(53, protocol: \"UDP\")")
                .and_then(|a| lw.int(a, desc.clone()));
            let mut nf = lw.named(call, &desc);
            let protocol = nf
                .take("protocol")
                .and_then(|p| lw.str(p, format!("{desc} › protocol")));
            nf.finish(lw, &["protocol"]);
            (number, protocol)
        }
        _ => (lw.int(val, desc), None),
    };
    Some((number?, protocol))
}

pub(super) fn resources(lw: &mut Lower, v: &Value, owner: &str) -> Resources {
    let mut r = Resources::default();
    let desc = format!("{owner} › resources");
    let mut f = Fields::of(lw, Some(v), desc.clone());
    for (k, val) in f.all() {
        match k.text.as_str() {
            "requests" | "limits" => {
                let mut inner = Fields::of(lw, Some(val), format!("{desc} › {}", k.text));
                for (rk, rv) in inner.all() {
                    let d = format!("{desc} › {} › {}", k.text, rk.text);
                    let key = Spanned::new(rk.text.clone(), lw.loc(rk.sp, d.clone()));
                    if let Some(q) = lw.text(rv, d) {
                        if k.text == "requests" {
                            &mut r.requests
                        } else {
                            &mut r.limits
                        }
                        .push((key, q));
                    }
                }
            }
            _ => {
                let d = format!("{desc} › {}", k.text);
                let key = Spanned::new(k.text.clone(), lw.loc(k.sp, d.clone()));
                if let Some(q) = lw.text(val, d) {
                    r.requests.push((key, q));
                }
            }
        }
    }
    r
}

pub(super) fn probe(lw: &mut Lower, v: &Value, desc: &str) -> Option<Probe> {
    let call = lw.call(
        v,
        &["http_get", "tcp", "exec"],
        "http_get(\"/healthz\", port: http)",
    )?;
    let mut nf = lw.named(call, desc);
    let action = match call.name.text.as_str() {
        "http_get" => {
            lw.max_args(call, 2, "http_get(\"/healthz\", port: http)");
            let path = lw
                .arg(call, 0, "a path", "http_get(\"/healthz\", port: http)")
                .and_then(|p| lw.str(p, format!("{desc} › path")));
            let port = port_arg(lw, call, &mut nf, desc, 1);
            ProbeAction::Http {
                path: path?,
                port: port?,
            }
        }
        "tcp" => {
            let port = port_arg(lw, call, &mut nf, desc, 0);
            ProbeAction::Tcp { port: port? }
        }
        _ => {
            let cmd = lw
                .arg(call, 0, "a command", "exec([\"cat\", \"/tmp/ready\"])")
                .map(|c| lw.str_list(c, &format!("{desc} › command")));
            ProbeAction::Exec { command: cmd? }
        }
    };
    let is_http = matches!(action, ProbeAction::Http { .. });
    let mut p = Probe {
        action,
        ..Probe::default()
    };
    if let Some(h) = nf.take("headers") {
        if is_http {
            p.headers = lw.labels(h, &format!("{desc} › headers"));
        } else if let Some(k) = nf.key("headers") {
            lw.fail(
                Code::UnknownKey,
                k.sp,
                format!(
                    "`headers` apply to `http_get(…)` probes, not `{}(…)`",
                    call.name.text
                ),
                "remove it",
            );
        }
    }
    for (key, slot) in [
        ("initial_delay", &mut p.initial_delay),
        ("period", &mut p.period),
        ("timeout", &mut p.timeout),
        ("failure_threshold", &mut p.failure_threshold),
    ] {
        if let Some(v) = nf.take(key) {
            *slot = lw.int(v, format!("{desc} › {key}"));
        }
    }
    nf.finish(
        lw,
        &[
            "port",
            "initial_delay",
            "period",
            "timeout",
            "failure_threshold",
            "headers",
        ],
    );
    Some(p)
}

/// `port: http` as a named argument, or positional argument `i`.
fn port_arg(
    lw: &mut Lower,
    call: &crate::ast::Call,
    nf: &mut Fields,
    desc: &str,
    i: usize,
) -> Option<PortRef> {
    let v = nf.take("port").or(call.args.get(i));
    match v {
        Some(v) => lw.port_ref(v, &format!("{desc} › port")),
        None => {
            lw.fail(
                Code::MissingKey,
                call.sp,
                format!("`{}(…)` needs a port", call.name.text),
                "add `port: http` (a named container port)",
            );
            None
        }
    }
}

pub(super) fn mounts(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › mounts"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › mount {}", k.text);
        let path = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut m = Mount {
            path,
            ..Mount::default()
        };
        match val {
            Value::Call(_) => {
                let Some(call) = lw.call(val, &["volume"], "volume(conf, read_only: true)") else {
                    continue;
                };
                let Some(arg) = lw.arg(call, 0, "the volume", "volume(conf, read_only: true)")
                else {
                    continue;
                };
                let Some(volume) = lw.name(arg, format!("{desc} › volume")) else {
                    continue;
                };
                m.volume = volume;
                let mut nf = lw.named(call, &desc);
                m.read_only = nf
                    .take("read_only")
                    .and_then(|r| lw.bool(r))
                    .unwrap_or(false);
                m.sub_path = nf
                    .take("sub_path")
                    .and_then(|s| lw.str(s, format!("{desc} › sub_path")));
                nf.finish(lw, &["read_only", "sub_path"]);
            }
            _ => {
                let Some(volume) = lw.name(val, format!("{desc} › volume")) else {
                    continue;
                };
                m.volume = volume;
            }
        }
        out.push(m);
    }
    out
}

/// A container's `command:` or `args:`: written out, or a Rust expression giving one string or a list,
/// assigned to the field when `app()` runs.
pub(super) fn text_list(
    lw: &mut Lower,
    v: &Value,
    owner: &str,
    workload: &str,
    container: &str,
    field: &'static str,
) -> Vec<Spanned<String>> {
    let desc = format!("{owner} › {field}");
    if let Value::Expr(e, sp) = v {
        let at = lw.loc(*sp, desc);
        let place = super::Place {
            workload: workload.to_string(),
            container: Some(container.to_string()),
            field,
        };
        lw.dynamic(at, super::DynamicKind::Strings(e.clone(), place));
        return Vec::new();
    }
    lw.str_list(v, &desc)
}
