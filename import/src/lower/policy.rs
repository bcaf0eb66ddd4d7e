//! Lowering ServiceAccounts, RBAC (roles whose rules the DSL's `rule(…)` holds, bindings to declared
//! roles and ServiceAccounts), autoscalers and disruption budgets.

use super::Cx;
use crate::dsl::{Dsl, Item};
use serde_json::Value;

/// `service_account NAME { automount, spec: { imagePullSecrets, … } }` (or `service_account NAME;`).
pub(super) fn service_account(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    let mut item = Item::new("service_account", name);
    cx.meta(&mut item, o);
    let mut rest = o.as_object()?.clone();
    for k in ["apiVersion", "kind", "metadata"] {
        rest.shift_remove(k);
    }
    if let Some(a) = rest
        .shift_remove("automountServiceAccountToken")
        .as_ref()
        .and_then(Dsl::from_json)
    {
        item.entry("automount", a);
    }
    item.json_entry("spec", Some(&Value::Object(rest)));
    cx.service_accounts.insert(name.to_string());
    Some(item)
}

/// `role NAME { rules: [rule(groups, resources, verbs, names)] }`; rules with other fields
/// (`nonResourceURLs`) or an `aggregationRule` have no first-class form.
pub(super) fn role(cx: &mut Cx, o: &Value) -> Option<Item> {
    let obj = o.as_object()?;
    if obj
        .keys()
        .any(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "rules"))
    {
        return None;
    }
    let cluster = o["kind"] == "ClusterRole";
    let name = o["metadata"]["name"].as_str()?;
    let mut rules = Vec::new();
    for r in o["rules"].as_array().cloned().unwrap_or_default() {
        let r = r.as_object()?;
        let mut named = Vec::new();
        for (field, key) in [
            ("apiGroups", "groups"),
            ("resources", "resources"),
            ("verbs", "verbs"),
            ("resourceNames", "names"),
        ] {
            if let Some(v) = r.get(field).and_then(Dsl::from_json) {
                named.push((key.to_string(), v));
            }
        }
        if r.len() != named.len() {
            return None;
        }
        rules.push(Dsl::Call("rule".into(), Vec::new(), named));
    }
    let mut item = Item::new(if cluster { "cluster_role" } else { "role" }, name);
    cx.meta(&mut item, o);
    item.entry("rules", Dsl::List(rules));
    cx.roles.insert((cluster, name.to_string()));
    Some(item)
}

/// `role_binding NAME { role: ROLE, subjects: [SA, user("…"), group("…"), service_account("NS", "SA")] }`
/// when the role is imported (or is a ClusterRole someone else makes: `role: cluster_role("view")`) and
/// every subject has a first-class form; other bindings are included as they are.
pub(super) fn role_binding(cx: &mut Cx, o: &Value) -> Option<Item> {
    const RBAC: &str = "rbac.authorization.k8s.io";
    let cluster = o["kind"] == "ClusterRoleBinding";
    let role_ref = &o["roleRef"];
    let role = role_ref["name"].as_str()?;
    if role_ref["apiGroup"] != RBAC {
        return None;
    }
    let declared = |cluster_role: bool| cx.roles.contains(&(cluster_role, role.to_string()));
    let role = match role_ref["kind"].as_str()? {
        // By name, a RoleBinding's role is the app's Role when it has one of that name too (render's
        // rule), so such a binding of the ClusterRole stays as it is.
        "ClusterRole" if declared(true) && !cluster && declared(false) => return None,
        "ClusterRole" if declared(true) => Dsl::Name(role.into()),
        "ClusterRole" => Dsl::Call("cluster_role".into(), vec![Dsl::Str(role.into())], vec![]),
        "Role" if !cluster && declared(false) => Dsl::Name(role.into()),
        _ => return None,
    };
    let mut subjects = Vec::new();
    for s in o["subjects"].as_array().cloned().unwrap_or_default() {
        let fields = s.as_object()?;
        let name = s["name"].as_str()?;
        let namespace = s["namespace"].as_str();
        let api_group = s["apiGroup"].as_str();
        let known = |keys: &[&str]| fields.keys().all(|k| keys.contains(&k.as_str()));
        subjects.push(match s["kind"].as_str()? {
            "ServiceAccount" if !known(&["kind", "name", "namespace", "apiGroup"]) => return None,
            "ServiceAccount" if api_group.is_some_and(|g| !g.is_empty()) => return None,
            "ServiceAccount"
                if namespace.is_none_or(|ns| ns == cx.namespace)
                    && cx.service_accounts.contains(name) =>
            {
                Dsl::Name(name.into())
            }
            "ServiceAccount" => Dsl::Call(
                "service_account".into(),
                vec![
                    Dsl::Str(namespace.unwrap_or(&cx.namespace).into()),
                    Dsl::Str(name.into()),
                ],
                vec![],
            ),
            kind @ ("User" | "Group")
                if known(&["kind", "name", "apiGroup"]) && api_group == Some(RBAC) =>
            {
                Dsl::Call(kind.to_lowercase(), vec![Dsl::Str(name.into())], vec![])
            }
            _ => return None,
        });
    }
    let keyword = if cluster {
        "cluster_role_binding"
    } else {
        "role_binding"
    };
    let mut item = Item::new(keyword, o["metadata"]["name"].as_str()?);
    cx.meta(&mut item, o);
    item.entry("role", role);
    item.entry("subjects", Dsl::List(subjects));
    Some(item)
}

/// `autoscaler NAME -> WORKLOAD { min, max, cpu, memory, spec: { behavior } }` (autoscaling/v2, scaling an
/// imported Deployment or StatefulSet).
pub(super) fn autoscaler(cx: &mut Cx, o: &Value) -> Option<Item> {
    let mut spec = o["spec"].as_object()?.clone();
    let target = spec.shift_remove("scaleTargetRef")?;
    let kind = target["kind"].as_str()?;
    let name = target["name"].as_str()?;
    if target["apiVersion"] != "apps/v1"
        || !matches!(kind, "Deployment" | "StatefulSet")
        || !cx
            .workloads
            .iter()
            .any(|w| w.kind == kind && w.name == name)
    {
        return None;
    }
    // `cpu:` and `memory:` (average utilization, percent) are the metrics the DSL has; an autoscaler with
    // others (or none) is included as it is.
    let mut percents = Vec::new();
    for m in spec.shift_remove("metrics")?.as_array()? {
        let resource = m["resource"]["name"].as_str()?;
        let target = &m["resource"]["target"];
        let only_utilization = m.as_object()?.len() == 2
            && m["resource"].as_object()?.len() == 2
            && target.as_object()?.len() == 2;
        if m["type"] != "Resource" || target["type"] != "Utilization" || !only_utilization {
            return None;
        }
        let key = match resource {
            "cpu" => "cpu",
            "memory" => "memory",
            _ => return None,
        };
        percents.push((key, Dsl::from_json(&target["averageUtilization"])?));
    }
    if percents.is_empty() {
        return None;
    }
    let mut item = Item::new("autoscaler", o["metadata"]["name"].as_str()?);
    item.arrow = Some(name.to_string());
    cx.meta(&mut item, o);
    let min = spec.shift_remove("minReplicas").unwrap_or(Value::from(1));
    item.entry("min", Dsl::from_json(&min)?);
    item.entry("max", Dsl::from_json(&spec.shift_remove("maxReplicas")?)?);
    for (k, v) in percents {
        item.entry(k, v);
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}

/// `disruption_budget NAME -> WORKLOAD { min_available | max_unavailable, spec: { … } }` when its
/// selector picks an imported workload.
pub(super) fn budget(cx: &mut Cx, o: &Value) -> Option<Item> {
    let mut spec = o["spec"].as_object()?.clone();
    let selector = spec.get("selector")?.as_object()?;
    if selector.keys().any(|k| k != "matchLabels") {
        return None;
    }
    let target = cx
        .workload_selected_by(selector["matchLabels"].as_object()?)?
        .name
        .clone();
    let mut item = Item::new("disruption_budget", o["metadata"]["name"].as_str()?);
    item.arrow = Some(target);
    cx.meta(&mut item, o);
    if let Some(v) = spec.shift_remove("minAvailable") {
        item.entry("min_available", Dsl::from_json(&v)?);
    } else if let Some(v) = spec.shift_remove("maxUnavailable") {
        item.entry("max_unavailable", Dsl::from_json(&v)?);
    } else {
        return None;
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    Some(item)
}
