//! NetworkPolicies (networking.k8s.io/v1) as `network_policy NAME { pods, types, ingress, egress }`: the
//! selector form, which renders the team's own selectors, peers and ports as written.

use super::Cx;
use crate::dsl::{Dsl, Item};
use piceli_core::rules;
use serde_json::{Map, Value};

/// `{ app: "web" }` of a selector with `matchLabels` only (valid label keys and values), and what else it
/// has (`matchExpressions`, kept in the `spec:` block for `podSelector`).
fn labels(selector: &Value) -> Option<(Dsl, Map<String, Value>)> {
    let mut rest = selector.as_object()?.clone();
    let labels = match rest.shift_remove("matchLabels") {
        Some(Value::Object(m)) => m,
        None => Map::new(),
        Some(_) => return None,
    };
    for (k, v) in &labels {
        rules::label_key(k).ok()?;
        rules::label_value(v.as_str()?).ok()?;
    }
    Some((Dsl::str_map(&labels), rest))
}

/// A selector with nothing but `matchLabels`.
fn only_labels(selector: &Value) -> Option<Dsl> {
    let (dsl, rest) = labels(selector)?;
    rest.is_empty().then_some(dsl)
}

/// `pods({ … })`, `pods({ … }, namespaces: { … })`, `namespaces({ … })`, `cidr("…", except: [ … ])`.
fn peer(p: &Value) -> Option<Dsl> {
    let p = p.as_object()?;
    let call = |name: &str, args: Vec<Dsl>, named: Vec<(String, Dsl)>| {
        Some(Dsl::Call(name.into(), args, named))
    };
    match (
        p.get("podSelector"),
        p.get("namespaceSelector"),
        p.get("ipBlock"),
        p.len(),
    ) {
        (Some(pods), None, None, 1) => call("pods", vec![only_labels(pods)?], Vec::new()),
        (Some(pods), Some(ns), None, 2) => call(
            "pods",
            vec![only_labels(pods)?],
            vec![("namespaces".into(), only_labels(ns)?)],
        ),
        (None, Some(ns), None, 1) => call("namespaces", vec![only_labels(ns)?], Vec::new()),
        (None, None, Some(Value::Object(block)), 1) => {
            let cidr = block.get("cidr")?.as_str()?;
            let mut named = Vec::new();
            match block.get("except") {
                None => {}
                Some(Value::Array(e)) if !e.is_empty() && e.iter().all(Value::is_string) => {
                    named.push(("except".into(), Dsl::from_json(&Value::Array(e.clone()))?));
                }
                Some(_) => return None,
            }
            if block.len() != 1 + named.len() {
                return None;
            }
            call("cidr", vec![Dsl::Str(cidr.into())], named)
        }
        _ => None,
    }
}

/// `80`, `"http"`, `port(53, protocol: "UDP")`, `port(8000, end: 8080)`.
fn port(p: &Value) -> Option<Dsl> {
    let p = p.as_object()?;
    if p.keys()
        .any(|k| !matches!(k.as_str(), "port" | "endPort" | "protocol"))
    {
        return None;
    }
    let number = match p.get("port") {
        None => None,
        Some(Value::Number(n)) => Some(Dsl::Int(n.as_i64()?)),
        Some(Value::String(name))
            if rules::port_name(name).is_ok() && !p.contains_key("endPort") =>
        {
            Some(Dsl::Str(name.clone()))
        }
        Some(_) => return None,
    };
    let mut named = Vec::new();
    if let Some(end) = p.get("endPort") {
        named.push(("end".into(), Dsl::Int(end.as_i64()?)));
        number.as_ref()?;
    }
    if let Some(proto) = p.get("protocol") {
        named.push(("protocol".into(), Dsl::Str(proto.as_str()?.into())));
    }
    match (number, named.is_empty()) {
        (Some(n), true) => Some(n),
        (n, _) => Some(Dsl::Call("port".into(), n.into_iter().collect(), named)),
    }
}

/// `[{ from: [ … ], ports: [ … ] }]` (`to:` for egress); an empty `from`/`to`/`ports` list has no form.
fn rules_of(list: &Value, peers_key: &str) -> Option<Dsl> {
    let mut out = Vec::new();
    for r in list.as_array()? {
        let r = r.as_object()?;
        let mut entries = Vec::new();
        for (k, v) in r {
            let items = v.as_array().filter(|l| !l.is_empty())?;
            let dsl = if k == peers_key {
                items.iter().map(peer).collect::<Option<Vec<_>>>()?
            } else if k == "ports" {
                items.iter().map(port).collect::<Option<Vec<_>>>()?
            } else {
                return None;
            };
            entries.push((k.clone(), Dsl::List(dsl)));
        }
        out.push(Dsl::Map(entries));
    }
    Some(Dsl::List(out))
}

/// `policyTypes` as `types:` (empty: the API's default), when it can be: each entry `Ingress` or `Egress`
/// once, and no rules for a direction it leaves out (those compile only as written, in `spec:`).
fn first_class_types(spec: &Map<String, Value>) -> Option<Vec<String>> {
    let types: Vec<String> = match spec.get("policyTypes") {
        None => Vec::new(),
        Some(t) => t
            .as_array()?
            .iter()
            .map(|t| t.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?,
    };
    for (i, t) in types.iter().enumerate() {
        if !matches!(t.as_str(), "Ingress" | "Egress") || types[..i].contains(t) {
            return None;
        }
    }
    for (field, direction) in [("ingress", "Ingress"), ("egress", "Egress")] {
        if spec.contains_key(field) && !types.is_empty() && !types.iter().any(|t| t == direction) {
            return None;
        }
    }
    Some(types)
}

/// `network_policy NAME { pods: { … }, types: [ … ], ingress: [ … ], egress: [ … ], spec: { … } }`, or
/// `None` when its pod selector has no place in that form (the policy is then included as it is).
pub(super) fn network_policy(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let mut spec = o["spec"].as_object()?.clone();
    let (pods, pod_rest) = labels(spec.get("podSelector")?)?;
    let mut item = Item::new("network_policy", name);
    cx.meta(&mut item, o);
    item.entry("pods", pods);
    if pod_rest.is_empty() {
        spec.shift_remove("podSelector");
    } else {
        spec.insert("podSelector".into(), Value::Object(pod_rest));
    }
    // `types:` and the rules are first-class when they fit; what does not (a peer's `matchExpressions`,
    // an empty list, rules for a direction `policyTypes` leaves out, which Kubernetes ignores) stays in
    // the `spec:` block as written, so nothing is lost and nothing needs `include`.
    if let Some(types) = first_class_types(&spec) {
        if !types.is_empty() {
            item.entry(
                "types",
                Dsl::List(types.iter().map(|t| Dsl::Str(t.to_string())).collect()),
            );
        }
        spec.shift_remove("policyTypes");
        for (field, peers) in [("ingress", "from"), ("egress", "to")] {
            if let Some(rules) = spec.get(field).and_then(|list| rules_of(list, peers)) {
                item.entry(field, rules);
                spec.shift_remove(field);
            }
        }
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}
