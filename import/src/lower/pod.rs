//! First-class container resources, probes and mounts, and pod volumes, where the manifest's shape is one
//! the DSL renders back field for field (and `app!` accepts at compile time); anything else stays in the
//! `container:`/`pod:` block as written.

use super::Cx;
use crate::dsl::Dsl;
use piceli_core::rules;
use serde_json::{Map, Value};

/// A name the DSL takes bare as a reference (`config_map(settings)`, `volume(conf)`).
fn simple(n: &str) -> bool {
    crate::print::name(n) == n
}

/// `resources: { requests: { cpu: "100m" }, limits: { memory: "128Mi" } }` when every quantity is a string
/// the DSL's rules accept and no request is above its limit (else `None`: the field stays in the block).
pub(super) fn resources(v: &Value) -> Option<Dsl> {
    let r = v.as_object()?;
    if r.keys().any(|k| k != "requests" && k != "limits") {
        return None;
    }
    let mut entries = Vec::new();
    let mut parsed: Vec<(&str, &str, rules::Quantity)> = Vec::new();
    for side in ["requests", "limits"] {
        let Some(list) = r.get(side) else { continue };
        let list = list.as_object()?;
        if list.is_empty() {
            return None;
        }
        let mut side_entries = Vec::new();
        for (name, q) in list {
            let text = q.as_str()?;
            let q = match name.as_str() {
                "memory" | "ephemeral-storage" | "storage" => rules::memory_quantity(text),
                "cpu" => rules::cpu_quantity(text),
                _ => rules::parse_quantity(text),
            }
            .ok()?;
            parsed.push((side, name, q));
            side_entries.push((name.clone(), Dsl::Str(text.to_string())));
        }
        entries.push((side.to_string(), Dsl::Map(side_entries)));
    }
    let above_limit = parsed.iter().any(|(side, name, q)| {
        *side == "requests"
            && parsed
                .iter()
                .any(|(s, n, limit)| *s == "limits" && n == name && q > limit)
    });
    (!entries.is_empty() && !above_limit).then_some(Dsl::Map(entries))
}

/// `http_get("/", port: http, period: 5)`, `tcp(port: 5432)`, `exec(["pg_isready"])` when the probe has
/// only what these render (its port one of the container's first-class `ports`).
pub(super) fn probe(v: &Value, ports: &[(String, i64)]) -> Option<Dsl> {
    let p = v.as_object()?;
    let mut named = Vec::new();
    let mut action = None;
    for (k, val) in p {
        match k.as_str() {
            "httpGet" | "tcpSocket" | "exec" if action.is_none() => action = Some((k, val)),
            "initialDelaySeconds" | "periodSeconds" | "timeoutSeconds" | "failureThreshold" => {
                let n = val.as_i64().filter(|n| *n >= 0)?;
                let key = match k.as_str() {
                    "initialDelaySeconds" => "initial_delay",
                    "periodSeconds" => "period",
                    "timeoutSeconds" => "timeout",
                    _ => "failure_threshold",
                };
                named.push((key.to_string(), Dsl::Int(n)));
            }
            _ => return None,
        }
    }
    let (kind, body) = action?;
    let body = body.as_object()?;
    let port = |body: &Map<String, Value>| -> Option<Dsl> {
        match body.get("port")? {
            Value::String(n) if simple(n) && ports.iter().any(|(p, _)| p == n) => {
                Some(Dsl::Name(n.clone()))
            }
            Value::Number(n) => {
                let n = n.as_i64()?;
                ports.iter().any(|(_, p)| *p == n).then_some(Dsl::Int(n))
            }
            _ => None,
        }
    };
    let (call, positional) = match kind.as_str() {
        "httpGet" => {
            if body
                .keys()
                .any(|k| !matches!(k.as_str(), "path" | "port" | "httpHeaders"))
            {
                return None;
            }
            let path = body.get("path")?.as_str()?;
            rules::http_path(path).ok()?;
            named.insert(0, ("port".into(), port(body)?));
            if let Some(h) = body.get("httpHeaders") {
                let mut headers = Vec::new();
                for header in h.as_array()? {
                    let header = header.as_object()?;
                    if header.len() != 2 {
                        return None;
                    }
                    let name = header.get("name")?.as_str()?;
                    let value = header.get("value")?.as_str()?;
                    if headers.iter().any(|(n, _): &(String, Dsl)| n == name) {
                        return None;
                    }
                    headers.push((name.to_string(), Dsl::Str(value.to_string())));
                }
                if headers.is_empty() {
                    return None;
                }
                named.push(("headers".into(), Dsl::Map(headers)));
            }
            ("http_get", vec![Dsl::Str(path.to_string())])
        }
        "tcpSocket" => {
            if body.len() != 1 {
                return None;
            }
            named.insert(0, ("port".into(), port(body)?));
            ("tcp", Vec::new())
        }
        _ => {
            let command = body.get("command")?.as_array()?;
            if body.len() != 1 || command.is_empty() || command.iter().any(|c| !c.is_string()) {
                return None;
            }
            ("exec", vec![Dsl::from_json(body.get("command")?)?])
        }
    };
    Some(Dsl::Call(call.into(), positional, named))
}

/// `volumes: { conf: config_map(settings), creds: secret(db), data: pvc(data), tmp: empty_dir() }` when
/// every volume is one of these, naming an imported (or `external`) object; also the volumes' names, which
/// first-class `mounts:` may then name.
pub(super) fn volumes(cx: &Cx, list: &Value) -> Option<(Dsl, Vec<String>)> {
    let mut entries = Vec::new();
    let mut names = Vec::new();
    for v in list.as_array()? {
        let v = v.as_object()?;
        if v.len() != 2 {
            return None;
        }
        let name = v.get("name")?.as_str()?;
        if names.iter().any(|n| n == name) {
            return None;
        }
        let (kind, source) = v.iter().find(|(k, _)| *k != "name")?;
        let source = source.as_object()?;
        let reference = |field: &str, declared: bool| -> Option<Dsl> {
            let target = source.get(field)?.as_str()?;
            (source.len() == 1 && declared && simple(target)).then(|| Dsl::Name(target.to_string()))
        };
        let target = |field: &str| source.get(field).and_then(Value::as_str).unwrap_or("");
        let value = match kind.as_str() {
            "configMap" => Dsl::Call(
                "config_map".into(),
                vec![reference("name", cx.config_maps.contains(target("name")))?],
                Vec::new(),
            ),
            "secret" => Dsl::Call(
                "secret".into(),
                vec![reference(
                    "secretName",
                    cx.secrets.contains(target("secretName")),
                )?],
                Vec::new(),
            ),
            "persistentVolumeClaim" => Dsl::Call(
                "pvc".into(),
                vec![reference(
                    "claimName",
                    cx.pvcs.contains(target("claimName")),
                )?],
                Vec::new(),
            ),
            "emptyDir" => {
                let mut named = Vec::new();
                for (k, val) in source {
                    match (k.as_str(), val.as_str()) {
                        ("medium", Some("Memory")) => {
                            named.push(("memory".into(), Dsl::Bool(true)))
                        }
                        ("sizeLimit", Some(q)) if rules::storage_quantity(q).is_ok() => {
                            named.push(("size_limit".into(), Dsl::Str(q.to_string())))
                        }
                        _ => return None,
                    }
                }
                Dsl::Call("empty_dir".into(), Vec::new(), named)
            }
            _ => return None,
        };
        entries.push((name.to_string(), value));
        names.push(name.to_string());
    }
    (!entries.is_empty()).then_some((Dsl::Map(entries), names))
}

/// `mounts: { "/etc/app": volume(conf, read_only: true), "/tmp": tmp }` when every mount names one of the
/// first-class `volumes` by path, mount-only (`readOnly: true`) and `subPath` at most.
pub(super) fn mounts(list: &Value, volumes: &[String]) -> Option<Dsl> {
    let mut entries: Vec<(String, Dsl)> = Vec::new();
    for m in list.as_array()? {
        let m = m.as_object()?;
        if m.keys()
            .any(|k| !matches!(k.as_str(), "name" | "mountPath" | "readOnly" | "subPath"))
        {
            return None;
        }
        let volume = m.get("name")?.as_str()?;
        let path = m.get("mountPath")?.as_str()?;
        if !volumes.iter().any(|v| v == volume)
            || !simple(volume)
            || rules::absolute_path(path).is_err()
            || entries.iter().any(|(p, _)| p == path)
        {
            return None;
        }
        let mut named = Vec::new();
        match m.get("readOnly") {
            None => {}
            Some(Value::Bool(true)) => named.push(("read_only".into(), Dsl::Bool(true))),
            Some(_) => return None,
        }
        if let Some(sub) = m.get("subPath") {
            let sub = sub.as_str().filter(|s| !s.is_empty())?;
            named.push(("sub_path".into(), Dsl::Str(sub.to_string())));
        }
        let name = Dsl::Name(volume.to_string());
        let value = if named.is_empty() {
            name
        } else {
            Dsl::Call("volume".into(), vec![name], named)
        };
        entries.push((path.to_string(), value));
    }
    (!entries.is_empty()).then_some(Dsl::Map(entries))
}
