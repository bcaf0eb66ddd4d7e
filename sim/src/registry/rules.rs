//! Semantic validation helpers shared by the kinds' strategies (after defaulting), producing 422
//! Invalid causes worded like the real API server's: metadata, workload selectors and templates,
//! containers, Service ports, ConfigMap keys (`per_kind.rs` runs a kind's rules).

use serde_json::Value;

use crate::status::Cause;

pub(crate) fn required(field: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: "Required value".into(),
        field: field.into(),
    }
}

pub(crate) fn invalid(field: &str, value: &Value, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {detail}"),
        field: field.into(),
    }
}

pub(crate) fn containers(spec: &Value, prefix: &str, out: &mut Vec<Cause>) {
    match spec.get("containers").and_then(Value::as_array) {
        None => out.push(required(&format!("{prefix}.containers"))),
        Some(cs) if cs.is_empty() => out.push(required(&format!("{prefix}.containers"))),
        Some(cs) => {
            let mut names = Vec::new();
            for (i, c) in cs.iter().enumerate() {
                let at = format!("{prefix}.containers[{i}]");
                match c.get("name").and_then(Value::as_str) {
                    None | Some("") => out.push(required(&format!("{at}.name"))),
                    Some(n) if names.contains(&n) => out.push(Cause {
                        reason: "FieldValueDuplicate".into(),
                        message: format!("Duplicate value: {n:?}"),
                        field: format!("{at}.name"),
                    }),
                    Some(n) => names.push(n),
                }
                if c.get("image")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    out.push(required(&format!("{at}.image")));
                }
                for (j, p) in c
                    .get("ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let port = p.get("containerPort").and_then(Value::as_i64).unwrap_or(0);
                    if !(1..=65535).contains(&port) {
                        out.push(invalid(
                            &format!("{at}.ports[{j}].containerPort"),
                            &p["containerPort"],
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
            }
        }
    }
}

fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let ml = selector.get("matchLabels").and_then(Value::as_object);
    ml.into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v))
}

pub(crate) fn workload(obj: &Value, out: &mut Vec<Cause>) {
    let spec = &obj["spec"];
    let selector = &spec["selector"];
    let empty_selector = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
        && selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(|m| m.is_empty());
    if empty_selector {
        out.push(required("spec.selector"));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    if !empty_selector && !selector_matches(selector, labels) {
        let shown = labels.as_object().map(|m| {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        });
        out.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: `selector` does not match template `labels`",
                shown.unwrap_or_else(|| "map[string]string(nil)".into())
            ),
            field: "spec.template.metadata.labels".into(),
        });
    }
    if let Some(r) = spec
        .get("replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r < 0)
    {
        out.push(invalid(
            "spec.replicas",
            &Value::from(r),
            "must be greater than or equal to 0",
        ));
    }
    containers(&spec["template"]["spec"], "spec.template.spec", out);
}

pub(crate) fn service(obj: &Value, out: &mut Vec<Cause>) {
    let spec = &obj["spec"];
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if ports.is_empty() && ty != "ExternalName" && !headless {
        out.push(required("spec.ports"));
    }
    for (i, p) in ports.iter().enumerate() {
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            out.push(invalid(
                &format!("spec.ports[{i}].port"),
                &p["port"],
                "must be between 1 and 65535, inclusive",
            ));
        }
        // A numeric targetPort (defaulted from `port`) has the same range.
        if let Some(target) = p.get("targetPort").and_then(Value::as_i64)
            && !(1..=65535).contains(&target)
        {
            out.push(invalid(
                &format!("spec.ports[{i}].targetPort"),
                &p["targetPort"],
                "must be between 1 and 65535, inclusive",
            ));
        }
        if ports.len() > 1
            && p.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            out.push(required(&format!("spec.ports[{i}].name")));
        }
    }
}

pub(crate) fn config_keys(obj: &Value, field: &str, out: &mut Vec<Cause>) {
    for key in obj
        .get(field)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        let ok = !key.is_empty()
            && key.len() <= 253
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !ok {
            out.push(invalid(&format!("{field}[{key}]"), &Value::from(key.as_str()), "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"));
        }
    }
}

fn is_label_value(v: &str) -> bool {
    let b = v.as_bytes();
    v.is_empty()
        || (v.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c)))
}

fn is_qualified_name(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    !name.is_empty()
        && is_label_value(name)
        && prefix.is_none_or(crate::registry::validate::is_dns_subdomain)
}

pub(crate) fn metadata(obj: &Value, out: &mut Vec<Cause>) {
    for (k, v) in obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if !is_qualified_name(k) {
            out.push(invalid("metadata.labels", &Value::from(k.as_str()), "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"));
        }
        let text = v.as_str().unwrap_or("");
        if !is_label_value(text) {
            out.push(invalid("metadata.labels", v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
        }
    }
    for k in obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if !is_qualified_name(k) {
            out.push(invalid("metadata.annotations", &Value::from(k.as_str()), "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"));
        }
    }
    let total: usize = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
                .sum()
        })
        .unwrap_or(0);
    if total > 256 * 1024 {
        out.push(Cause {
            reason: "FieldValueTooLong".into(),
            message: "Too long: must have at most 262144 bytes".into(),
            field: "metadata.annotations".into(),
        });
    }
}

pub(crate) fn immutable(field: &str, value: &Value) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: field is immutable"),
        field: field.into(),
    }
}

/// An `immutable` cause when `ptr` differs between `old` and `new`.
pub(crate) fn immutable_if_changed(
    old: &Value,
    new: &Value,
    ptr: &str,
    field: &str,
    out: &mut Vec<Cause>,
) {
    if old.pointer(ptr) != new.pointer(ptr) {
        let shown = new.pointer(ptr).cloned().unwrap_or(Value::Null);
        out.push(immutable(field, &shown));
    }
}

/// The causes for changing the data of a ConfigMap or Secret marked `immutable`.
pub(crate) fn immutable_data(old: &Value, new: &Value, out: &mut Vec<Cause>) {
    if old.get("immutable") != Some(&Value::Bool(true)) {
        return;
    }
    let forbidden = |field: &str| Cause {
        reason: "FieldValueForbidden".into(),
        message: "Forbidden: field is immutable when `immutable` is set".into(),
        field: field.into(),
    };
    for f in ["data", "binaryData"] {
        if old.get(f) != new.get(f) {
            out.push(forbidden(f));
        }
    }
    if new.get("immutable") != Some(&Value::Bool(true)) {
        out.push(forbidden("immutable"));
    }
}
