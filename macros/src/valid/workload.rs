//! Lowering workloads: pod-level keys, containers (one by shorthand or many), probes, volumes, mounts.

use super::blocks::{CONTAINER_OWNED, Owned, POD_JOB_OWNED, POD_OWNED, WORKLOAD_SPEC_OWNED};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

const POD_KEYS: &[&str] = &[
    "replicas",
    "containers",
    "init_containers",
    "volumes",
    "labels",
    "annotations",
    "service_account",
    "schedule",
    "service",
    "volume_claims",
    "restart",
    "backoff_limit",
    "completions",
    "parallelism",
    "node_selector",
    "spec",
    "pod",
    "pod_labels",
    "pod_annotations",
    "grace",
    "priority",
    "pull_secrets",
    "security",
    "spread",
    "strategy",
];

const CONTAINER_KEYS: &[&str] = &[
    "image",
    "command",
    "args",
    "env",
    "ports",
    "resources",
    "ready",
    "live",
    "startup",
    "mounts",
    "pull_policy",
    "container",
];

pub(super) fn workload(lw: &mut Lower, item: &Item) {
    let kind = match item.keyword.text.as_str() {
        "stateful_set" => WorkloadKind::StatefulSet,
        "daemon_set" => WorkloadKind::DaemonSet,
        "job" => WorkloadKind::Job,
        "cron_job" => WorkloadKind::CronJob,
        _ => WorkloadKind::Deployment,
    };
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("{} {}", kind.keyword(), name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut w = Workload {
        kind,
        name: name.clone(),
        ..Workload::default()
    };

    if let Some(v) = f.take("replicas") {
        if kind.scalable() {
            w.replicas = lw.int(v, format!("{owner} › replicas"));
        } else {
            not_for(lw, &f, "replicas", kind);
        }
    }
    if let Some(v) = f.take("labels") {
        w.labels = lw.labels(v, &format!("{owner} › labels"));
    }
    if let Some(v) = f.take("annotations") {
        w.annotations = lw.labels(v, &format!("{owner} › annotations"));
    }
    if let Some(v) = f.take("pod_labels") {
        w.pod_labels = lw.labels(v, &format!("{owner} › pod_labels"));
    }
    if let Some(v) = f.take("pod_annotations") {
        w.pod_annotations = lw.labels(v, &format!("{owner} › pod_annotations"));
    }
    w.spec = lw.block(
        &mut f,
        "spec",
        schema::workload_spec(kind),
        WORKLOAD_SPEC_OWNED,
        &owner,
    );
    let pod_owned: &Owned = if kind.runs_to_completion() {
        POD_JOB_OWNED
    } else {
        POD_OWNED
    };
    w.pod = lw.block(&mut f, "pod", schema::POD_SPEC, pod_owned, &owner);
    super::shortcuts::workload(lw, &mut f, &mut w, &owner);
    if let Some(v) = f.take("node_selector") {
        w.node_selector = lw.labels(v, &format!("{owner} › node_selector"));
    }
    if let Some(v) = f.take("service_account") {
        w.service_account = lw.name(v, format!("{owner} › service_account"));
    }
    for (key, allowed, slot) in [
        ("schedule", kind == WorkloadKind::CronJob, &mut w.schedule),
        ("restart", kind.runs_to_completion(), &mut w.restart_policy),
    ] {
        if let Some(v) = f.take(key) {
            if allowed {
                *slot = lw.str(v, format!("{owner} › {key}"));
            } else {
                not_for(lw, &f, key, kind);
            }
        }
    }
    for (key, slot) in [
        ("backoff_limit", &mut w.backoff_limit),
        ("completions", &mut w.completions),
        ("parallelism", &mut w.parallelism),
    ] {
        if let Some(v) = f.take(key) {
            if kind.runs_to_completion() {
                *slot = lw.int(v, format!("{owner} › {key}"));
            } else {
                not_for(lw, &f, key, kind);
            }
        }
    }
    if let Some(v) = f.take("service") {
        if kind == WorkloadKind::StatefulSet {
            w.service_name = lw.name(v, format!("{owner} › service"));
        } else {
            not_for(lw, &f, "service", kind);
        }
    }
    if let Some(v) = f.take("volume_claims") {
        if kind == WorkloadKind::StatefulSet {
            w.volume_claims = claims(lw, v, &owner);
        } else {
            not_for(lw, &f, "volume_claims", kind);
        }
    }
    if kind == WorkloadKind::CronJob && w.schedule.is_none() {
        lw.fail(
            Code::MissingKey,
            name_sp(item),
            format!("{owner} has no schedule"),
            "add `schedule: \"*/5 * * * *\"`",
        );
    }
    if let Some(v) = f.take("volumes") {
        w.volumes = volumes(lw, v, &owner);
    }
    if let Some(v) = f.take("init_containers") {
        w.init_containers = containers(lw, v, &owner);
    }
    if let Some(v) = f.take("containers") {
        // With `containers:`, container keys at the top belong inside one of them.
        for key in CONTAINER_KEYS {
            if let Some(k) = f.key(key) {
                f.take(key);
                lw.fail(
                    Code::WrongType,
                    k.sp,
                    format!("`{key}` is a container key, and {owner} lists its containers under `containers:`"),
                    "move it into one of the containers, or drop `containers:` and keep one container at the top",
                );
            }
        }
        w.containers = containers(lw, v, &owner);
        if w.containers.is_empty() {
            lw.fail(
                Code::MissingKey,
                v.sp(),
                format!("{owner} has no containers"),
                "add `NAME: { image: \"…\" }`",
            );
        }
    } else {
        let desc = format!("{owner} › container {}", name.v);
        if let Some(c) = container_fields(lw, &mut f, name.clone(), name_sp(item), &desc) {
            w.containers.push(c);
        }
    }
    let allowed: Vec<&str> = POD_KEYS.iter().chain(CONTAINER_KEYS).copied().collect();
    f.finish(lw, &allowed);
    lw.app.workloads.push(w);
}

fn name_sp(item: &Item) -> Sp {
    item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp)
}

fn not_for(lw: &mut Lower, f: &Fields, key: &str, kind: WorkloadKind) {
    if let Some(k) = f.key(key) {
        lw.fail(
            Code::UnknownKey,
            k.sp,
            format!("`{key}` does not apply to a {}", kind.keyword()),
            "remove it",
        );
    }
}

fn containers(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Container> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › containers"));
    for (k, body) in f.all() {
        let desc = format!("{owner} › container {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut cf = Fields::of(lw, Some(body), desc.clone());
        let c = container_fields(lw, &mut cf, name, k.sp, &desc);
        cf.finish(lw, CONTAINER_KEYS);
        out.extend(c);
    }
    out
}

/// One container's keys; `None` (after reporting it) when it has no image.
fn container_fields(
    lw: &mut Lower,
    f: &mut Fields,
    name: Spanned<String>,
    name_sp: Sp,
    owner: &str,
) -> Option<Container> {
    let mut c = Container {
        name,
        ..Container::default()
    };
    let mut has_image = true;
    match f.take("image") {
        Some(Value::Call(call)) if call.name.text == "unpinned" => {
            c.unpinned = true;
            lw.max_args(call, 1, "unpinned(\"nginx:1.27\")");
            if let Some(v) = lw.arg(call, 0, "the image", "unpinned(\"nginx:1.27\")")
                && let Some(s) = lw.str(v, format!("{owner} › image"))
            {
                c.image = s;
            }
        }
        Some(v) => {
            if let Some(s) = lw.str(v, format!("{owner} › image")) {
                c.image = s;
            }
        }
        None => {
            has_image = false;
            lw.fail(
                Code::MissingKey,
                name_sp,
                format!("{owner} has no image"),
                "add `image: \"registry/repo:tag@sha256:…\"`",
            )
        }
    }
    if let Some(v) = f.take("command") {
        c.command = lw.str_list(v, &format!("{owner} › command"));
    }
    if let Some(v) = f.take("args") {
        c.args = lw.str_list(v, &format!("{owner} › args"));
    }
    if let Some(v) = f.take("pull_policy") {
        c.pull_policy = lw.str(v, format!("{owner} › pull_policy"));
    }
    if let Some(v) = f.take("env") {
        c.env = env(lw, v, owner);
    }
    if let Some(v) = f.take("ports") {
        c.ports = ports(lw, v, owner);
    }
    if let Some(v) = f.take("resources") {
        c.resources = resources(lw, v, owner);
    }
    if let Some(v) = f.take("ready") {
        c.readiness = probe(lw, v, &format!("{owner} › ready"));
    }
    if let Some(v) = f.take("live") {
        c.liveness = probe(lw, v, &format!("{owner} › live"));
    }
    if let Some(v) = f.take("startup") {
        c.startup = probe(lw, v, &format!("{owner} › startup"));
    }
    if let Some(v) = f.take("mounts") {
        c.mounts = mounts(lw, v, owner);
    }
    c.block = lw.block(f, "container", schema::CONTAINER, CONTAINER_OWNED, owner);
    has_image.then_some(c)
}

fn env(lw: &mut Lower, v: &Value, owner: &str) -> Vec<EnvVar> {
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

fn ports(lw: &mut Lower, v: &Value, owner: &str) -> Vec<ContainerPort> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › ports"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › port {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let (number, protocol) = match val {
            Value::Call(_) => {
                let Some(call) = lw.call(val, &["port"], "port(53, protocol: \"UDP\")") else {
                    continue;
                };
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
        if let Some(number) = number {
            out.push(ContainerPort {
                name,
                number,
                protocol,
            });
        }
    }
    out
}

fn resources(lw: &mut Lower, v: &Value, owner: &str) -> Resources {
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

fn probe(lw: &mut Lower, v: &Value, desc: &str) -> Option<Probe> {
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
    let mut p = Probe {
        action,
        ..Probe::default()
    };
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

fn volumes(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Volume> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › volumes"));
    for (k, val) in f.all() {
        let desc = format!("{owner} › volume {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let Some(call) = lw.call(
            val,
            &["config_map", "secret", "empty_dir", "pvc"],
            "config_map(settings)",
        ) else {
            continue;
        };
        let source = match call.name.text.as_str() {
            "empty_dir" => {
                let mut nf = lw.named(call, &desc);
                let memory = nf.take("memory").and_then(|m| lw.bool(m)).unwrap_or(false);
                let size_limit = nf
                    .take("size_limit")
                    .and_then(|s| lw.text(s, format!("{desc} › size_limit")));
                nf.finish(lw, &["memory", "size_limit"]);
                VolumeSource::EmptyDir { memory, size_limit }
            }
            kind => {
                let example = format!("{kind}(NAME)");
                let Some(arg) = lw.arg(call, 0, "the name of what it mounts", &example) else {
                    continue;
                };
                let Some(target) = lw.name(arg, format!("{desc} › {kind}")) else {
                    continue;
                };
                match kind {
                    "config_map" => VolumeSource::ConfigMap(target),
                    "secret" => VolumeSource::Secret(target),
                    _ => VolumeSource::Pvc(target),
                }
            }
        };
        out.push(Volume { name, source });
    }
    out
}

fn mounts(lw: &mut Lower, v: &Value, owner: &str) -> Vec<Mount> {
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

fn claims(lw: &mut Lower, v: &Value, owner: &str) -> Vec<ClaimTemplate> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › volume_claims"));
    for (k, body) in f.all() {
        let desc = format!("{owner} › volume claim {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut cf = Fields::of(lw, Some(body), desc.clone());
        let storage = match cf.take("storage") {
            Some(s) => lw.text(s, format!("{desc} › storage")),
            None => {
                lw.fail(
                    Code::MissingKey,
                    k.sp,
                    format!("{desc} has no storage size"),
                    "add `storage: \"1Gi\"`",
                );
                None
            }
        };
        let access_modes = cf
            .take("access")
            .map(|a| lw.str_list(a, &format!("{desc} › access")))
            .unwrap_or_default();
        let storage_class = cf
            .take("class")
            .and_then(|c| lw.str(c, format!("{desc} › class")));
        cf.finish(lw, &["storage", "access", "class"]);
        if let Some(storage) = storage {
            out.push(ClaimTemplate {
                name,
                storage,
                access_modes,
                storage_class,
            });
        }
    }
    out
}
