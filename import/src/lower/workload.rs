//! Lowering workloads (Deployment, StatefulSet, DaemonSet, Job, CronJob) and the Services that select them.

use super::{Cx, WorkloadRef, describe};
use crate::dsl::{Dsl, Item, is_empty_map};
use piceli_core::Code;
use serde_json::{Map, Value};

/// A workload as `deployment NAME { replicas, pod_labels, image/containers, pod: {…}, spec: {…} }`, or
/// `None` when its shape has no first-class form (it is then included as it is).
pub(super) fn workload(cx: &mut Cx, o: &Value) -> Option<Item> {
    let kind = o["kind"].as_str()?;
    let keyword = match kind {
        "Deployment" => "deployment",
        "StatefulSet" => "stateful_set",
        "DaemonSet" => "daemon_set",
        "Job" => "job",
        _ => "cron_job",
    };
    let name = o["metadata"]["name"].as_str()?.to_string();
    let mut spec = o["spec"].as_object()?.clone();
    let mut item = Item::new(keyword, &name);
    cx.meta(&mut item, o);
    // The Job's fields live in the CronJob's `jobTemplate.spec`; the DSL generates that (its keys are
    // `backoff_limit`, `completions` and `parallelism`), so a job template with anything else is included.
    let mut job = if kind == "CronJob" {
        let Value::Object(mut jt) = spec.shift_remove("jobTemplate")? else {
            return None;
        };
        let Value::Object(js) = jt.shift_remove("spec")? else {
            return None;
        };
        if !jt.is_empty() {
            return None;
        }
        let schedule = spec.shift_remove("schedule")?;
        item.entry("schedule", Dsl::from_json(&schedule)?);
        js
    } else if kind == "Job" {
        std::mem::take(&mut spec)
    } else {
        Map::new()
    };
    let template_from = if matches!(kind, "Job" | "CronJob") {
        &mut job
    } else {
        &mut spec
    };
    let Value::Object(mut template) = template_from.shift_remove("template")? else {
        return None;
    };
    if matches!(kind, "Job" | "CronJob") {
        for (field, key) in [
            ("backoffLimit", "backoff_limit"),
            ("completions", "completions"),
            ("parallelism", "parallelism"),
        ] {
            if let Some(v) = job.shift_remove(field).as_ref().and_then(Dsl::from_json) {
                item.entry(key, v);
            }
        }
        if kind == "CronJob" && !job.is_empty() {
            return None;
        }
        if kind == "Job" {
            spec = job;
        }
    }
    if let Some(r) = spec
        .shift_remove("replicas")
        .as_ref()
        .and_then(Dsl::from_json)
    {
        item.entry("replicas", r);
    }
    // Pod template metadata: labels and annotations have keys; anything else has no place.
    let mut pod_labels = Map::new();
    if let Some(Value::Object(mut meta)) = template.shift_remove("metadata") {
        if let Some(labels) = meta.shift_remove("labels") {
            pod_labels = labels.as_object().cloned().unwrap_or_default();
            if let Some(l) = cx.labels(&mut item, &labels, &describe(o), "pod label") {
                item.entry("pod_labels", l);
            }
        }
        if let Some(a) = meta
            .shift_remove("annotations")
            .as_ref()
            .and_then(Value::as_object)
            && !a.is_empty()
        {
            let a = cx.strings(&mut item, a, &describe(o), "pod annotation");
            item.entry("pod_annotations", a);
        }
        meta.shift_remove("creationTimestamp");
        if !meta.is_empty() {
            let keys: Vec<&String> = meta.keys().collect();
            cx.warn(
                Code::ImportFieldChanged,
                o,
                format!(
                    "pod template metadata {keys:?} dropped: only labels and annotations are kept"
                ),
            );
        }
    }
    let Value::Object(mut pod) = template.shift_remove("spec")? else {
        return None;
    };
    if matches!(kind, "Job" | "CronJob")
        && let Some(r) = pod
            .shift_remove("restartPolicy")
            .as_ref()
            .and_then(Dsl::from_json)
    {
        item.entry("restart", r);
    }
    let unpinned_before = cx.out.unpinned.len();
    cx.container_ports.clear();
    cx.pod_volumes.clear();
    let volumes = pod.get("volumes").and_then(|v| super::pod::volumes(cx, v));
    if let Some((_, names)) = &volumes {
        pod.shift_remove("volumes");
        cx.pod_volumes = names.clone();
    }
    let containers = pod.shift_remove("containers")?;
    let init = pod.shift_remove("initContainers");
    let containers = containers.as_array()?;
    let single = containers.len() == 1 && containers[0]["name"] == name.as_str() && init.is_none();
    if single {
        let (keys, rest) = container(cx, o, &containers[0])?;
        item.body.extend(keys);
        if !is_empty_map(&rest) {
            item.entry("container", rest);
        }
    } else {
        item.entry("containers", container_map(cx, o, containers)?);
        if let Some(init) = init.as_ref().and_then(Value::as_array) {
            // Services select the app containers' ports, not the init containers'.
            let keep = cx.container_ports.len();
            item.entry("init_containers", container_map(cx, o, init)?);
            cx.container_ports.truncate(keep);
        }
    }
    if let Some((dsl, _)) = volumes {
        item.entry("volumes", dsl);
    }
    let mut images: Vec<&str> = cx.out.unpinned[unpinned_before..]
        .iter()
        .map(|u| u.rsplit(": ").next().unwrap_or(u))
        .collect();
    images.dedup();
    images.sort_unstable();
    images.dedup();
    for image in images {
        let comment = match cx.pin_failures.get(image) {
            Some(why) => format!(
                "piceli: PCL0189 `--pin` could not resolve `{image}` ({why}): pin it (`@sha256:…`) to drop `unpinned`"
            ),
            None => format!(
                "piceli: `{image}` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`"
            ),
        };
        item.comments.push(comment);
    }
    pod_keys(cx, &mut item, o, &mut pod);
    item.json_entry("pod", Some(&Value::Object(pod)));
    item.json_entry("spec", Some(&Value::Object(spec)));
    cx.workloads.push(WorkloadRef {
        kind: kind.to_string(),
        name,
        pod_labels,
        ports: std::mem::take(&mut cx.container_ports),
        included: false,
    });
    Some(item)
}

/// The PodSpec fields that have a key of their own: `node_selector:`, `priority:`, `grace:`,
/// `pull_secrets:` (every entry a name alone, each a DNS label) and `service_account:` (one the app
/// declares; another stays in `pod:`, as the key names only declared or `external` ones). The rest stay in
/// `pod:`.
fn pod_keys(cx: &mut Cx, item: &mut Item, o: &Value, pod: &mut Map<String, Value>) {
    if let Some(Value::Array(list)) = pod.get("imagePullSecrets")
        && !list.is_empty()
        && let Some(names) = list
            .iter()
            .map(|entry| match entry.as_object() {
                Some(fields) if fields.len() == 1 => fields.get("name")?.as_str(),
                _ => None,
            })
            .collect::<Option<Vec<&str>>>()
        && names
            .iter()
            .all(|n| piceli_core::rules::is_dns1123_label(n))
    {
        let names = names
            .into_iter()
            .map(|n| Dsl::Name(n.to_string()))
            .collect();
        item.entry("pull_secrets", Dsl::List(names));
        pod.shift_remove("imagePullSecrets");
    }
    if let Some(Value::String(account)) = pod.get("serviceAccountName")
        && cx.service_accounts.contains(account)
    {
        item.entry("service_account", Dsl::Name(account.clone()));
        pod.shift_remove("serviceAccountName");
    }
    if let Some(Value::Object(selector)) = pod.get("nodeSelector")
        && !selector.is_empty()
    {
        let selector = selector.clone();
        pod.shift_remove("nodeSelector");
        let dsl = cx.strings(item, &selector, &describe(o), "node selector");
        item.entry("node_selector", dsl);
    }
    if let Some(Value::String(class)) = pod.get("priorityClassName") {
        item.entry("priority", Dsl::Str(class.clone()));
        pod.shift_remove("priorityClassName");
    }
    if let Some(seconds) = pod
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .filter(|s| *s >= 0)
    {
        item.entry("grace", Dsl::Int(seconds));
        pod.shift_remove("terminationGracePeriodSeconds");
    }
}

/// `{ NAME: { image: …, container: { … } }, … }`.
fn container_map(cx: &mut Cx, o: &Value, list: &[Value]) -> Option<Dsl> {
    let mut entries = Vec::new();
    for c in list {
        let name = c["name"].as_str()?.to_string();
        let (mut body, rest) = container(cx, o, c)?;
        if !is_empty_map(&rest) {
            body.push(("container".to_string(), rest));
        }
        entries.push((name, Dsl::Map(body)));
    }
    Some(Dsl::Map(entries))
}

/// A container's keys — image (pinned, or `unpinned("…")` with a comment), `command:`, `args:`,
/// `pull_policy:`, `env:` when every variable has a first-class form — and the rest of its fields as the
/// `container:` block (entries `(key, value)`; the block under `container`).
fn container(cx: &mut Cx, o: &Value, c: &Value) -> Option<(Vec<(String, Dsl)>, Dsl)> {
    let mut rest = c.as_object()?.clone();
    rest.shift_remove("name");
    let mut keys = Vec::new();
    let image = rest.shift_remove("image")?;
    let image = image.as_str()?;
    let image = if image.contains("@sha256:") {
        Dsl::Str(image.to_string())
    } else {
        cx.out.unpinned.push(format!("{}: {image}", describe(o)));
        Dsl::call("unpinned", image)
    };
    keys.push(("image".to_string(), image));
    for (field, key) in [
        ("command", "command"),
        ("args", "args"),
        ("imagePullPolicy", "pull_policy"),
    ] {
        if let Some(v) = rest.shift_remove(field).as_ref().and_then(Dsl::from_json) {
            keys.push((key.to_string(), v));
        }
    }
    if let Some(env) = rest.get("env").and_then(|e| env(cx, e)) {
        rest.shift_remove("env");
        keys.push(("env".to_string(), env));
    }
    let mut own_ports = Vec::new();
    if let Some((ports, named)) = rest.get("ports").and_then(container_ports) {
        rest.shift_remove("ports");
        keys.push(("ports".to_string(), ports));
        own_ports = named;
    }
    if let Some(r) = rest.get("resources").and_then(super::pod::resources) {
        rest.shift_remove("resources");
        keys.push(("resources".to_string(), r));
    }
    for (field, key) in [
        ("readinessProbe", "ready"),
        ("livenessProbe", "live"),
        ("startupProbe", "startup"),
    ] {
        if let Some(p) = rest
            .get(field)
            .and_then(|p| super::pod::probe(p, &own_ports))
        {
            rest.shift_remove(field);
            keys.push((key.to_string(), p));
        }
    }
    if let Some(m) = rest
        .get("volumeMounts")
        .and_then(|m| super::pod::mounts(m, &cx.pod_volumes))
    {
        rest.shift_remove("volumeMounts");
        keys.push(("mounts".to_string(), m));
    }
    cx.container_ports.extend(own_ports);
    Some((keys, Dsl::from_json(&Value::Object(rest))?))
}

/// `ports: { http: 8080, dns: port(53, protocol: "UDP") }` when every port has a valid name, or `ports: [8080,
/// port(53, protocol: "UDP")]` when none has a name, and no port a field but `name`, `containerPort` and
/// `protocol` (else `None`: the list stays in the `container:` block). Also the `(name, number)` pairs
/// (`""` for a port without a name), which Services' `-> WORKLOAD` ports and probes may then refer to.
fn container_ports(list: &Value) -> Option<(Dsl, Vec<(String, i64)>)> {
    let mut entries = Vec::new();
    let mut named: Vec<(String, i64)> = Vec::new();
    let list = list.as_array()?;
    let unnamed = list.iter().all(|p| p.get("name").is_none());
    for p in list {
        let p = p.as_object()?;
        if p.keys()
            .any(|k| !matches!(k.as_str(), "name" | "containerPort" | "protocol"))
        {
            return None;
        }
        let number = p.get("containerPort")?.as_i64()?;
        let protocol = p.get("protocol").and_then(Value::as_str);
        let name = if unnamed {
            if named.iter().any(|(_, n)| *n == number) {
                return None;
            }
            ""
        } else {
            let name = p.get("name")?.as_str()?;
            if piceli_core::rules::names::port_name(name).is_err()
                || named.iter().any(|(n, _)| n == name)
            {
                return None;
            }
            name
        };
        let value = match protocol {
            None | Some("TCP") => Dsl::Int(number),
            Some(proto) => Dsl::Call(
                "port".into(),
                vec![Dsl::Int(number)],
                vec![("protocol".into(), Dsl::Str(proto.into()))],
            ),
        };
        entries.push((name.to_string(), value));
        named.push((name.to_string(), number));
    }
    if entries.is_empty() {
        return None;
    }
    let dsl = if unnamed {
        Dsl::List(entries.into_iter().map(|(_, v)| v).collect())
    } else {
        Dsl::Map(entries)
    };
    Some((dsl, named))
}

/// `env: { NAME: "value", KEY: secret(db.key), MODE: config(settings.MODE), IP: field("status.podIP") }`
/// when every variable has one of these forms (references to imported objects only); else `None` and the
/// list stays in the `container:` block as written.
fn env(cx: &Cx, list: &Value) -> Option<Dsl> {
    let simple = |s: &str| crate::print::name(s) == s;
    let mut entries = Vec::new();
    for e in list.as_array()? {
        let e = e.as_object()?;
        let name = e.get("name")?.as_str()?;
        let value = match (e.get("value"), e.get("valueFrom")) {
            (Some(Value::String(v)), None) if e.len() == 2 => Dsl::Str(v.clone()),
            (None, Some(Value::Object(from))) if e.len() == 2 && from.len() == 1 => {
                let (kind, r) = from.iter().next()?;
                let r = r.as_object()?;
                match kind.as_str() {
                    "secretKeyRef" | "configMapKeyRef" if r.len() == 2 => {
                        let target = r.get("name")?.as_str()?;
                        let key = r.get("key")?.as_str()?;
                        let declared = if kind == "secretKeyRef" {
                            cx.secrets.contains(target)
                        } else {
                            cx.config_maps.contains(target)
                        };
                        if !declared || !simple(target) || !simple(key) {
                            return None;
                        }
                        let call = if kind == "secretKeyRef" {
                            "secret"
                        } else {
                            "config"
                        };
                        let path = Dsl::Path(vec![target.to_string(), key.to_string()]);
                        Dsl::Call(call.into(), vec![path], Vec::new())
                    }
                    "fieldRef" if r.len() == 1 => Dsl::call("field", r.get("fieldPath")?.as_str()?),
                    _ => return None,
                }
            }
            _ => return None,
        };
        entries.push((name.to_string(), value));
    }
    Some(Dsl::Map(entries))
}

/// A Service as `service NAME -> WORKLOAD { spec: { ports, selector, … } }` when its selector picks one of
/// the imported workloads; otherwise it is included as it is.
pub(super) fn service(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let spec = o["spec"].as_object()?.clone();
    // A Service cannot select a Job's or CronJob's pods in `app!` (PCL0057); one of no imported workload
    // (ExternalName, no selector, another app's pods, a subset of an included workload's) is written as is.
    let workload = spec
        .get("selector")
        .and_then(Value::as_object)
        .and_then(|selector| cx.workload_selected_by(selector))
        .filter(|w| !matches!(w.kind.as_str(), "Job" | "CronJob"));
    let Some(workload) = workload else {
        return Some(service_of_no_workload(cx, o, name, spec));
    };
    let target = workload.name.clone();
    let mut spec = spec;
    let first_class = super::network::service_ports(&spec, &workload.ports);
    let mut item = Item::new("service", name);
    item.arrow = Some(target);
    cx.meta(&mut item, o);
    let ports = match first_class {
        Some((key, dsl, named)) => {
            spec.shift_remove("ports");
            item.entry(key, dsl);
            // Its type has a key too (the DSL's ports and node ports are then first-class).
            let typed = match spec.get("type").and_then(Value::as_str) {
                Some("NodePort") => Some("node_port"),
                Some("LoadBalancer") => Some("load_balancer"),
                _ => None,
            };
            if let Some(t) = typed {
                spec.shift_remove("type");
                item.entry("type", Dsl::Name(t.into()));
            }
            named
        }
        None => spec_ports(&spec),
    };
    item.json_entry("spec", Some(&Value::Object(spec)));
    cx.services.insert(name.to_string(), ports);
    Some(item)
}

/// `service NAME { spec: { … } }`: the Service as written (`app!` checks it, PCL0088).
fn service_of_no_workload(cx: &mut Cx, o: &Value, name: &str, spec: Map<String, Value>) -> Item {
    let mut item = Item::new("service", name);
    cx.meta(&mut item, o);
    cx.services.insert(name.to_string(), spec_ports(&spec));
    item.json_entry("spec", Some(&Value::Object(spec)));
    item
}

/// The `(name, port)` of each port in a ServiceSpec (`""` for one without a name): what an Ingress may
/// route to by name or number.
fn spec_ports(spec: &Map<String, Value>) -> Vec<(String, i64)> {
    spec.get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p["name"].as_str().unwrap_or_default().to_string();
            Some((name, p["port"].as_i64()?))
        })
        .collect()
}
