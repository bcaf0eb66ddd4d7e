//! Which webhooks a request goes to: `rules` (groups, versions, resources with subresources,
//! operations, scope), `namespaceSelector` and `objectSelector`, as the real API server matches them.
//! `matchPolicy: Equivalent` is treated as Exact (a request is never converted to another version to
//! match a rule), and `matchConditions` are not evaluated (every condition counts as true).

use serde_json::Value;

use crate::registry::ResourceType;

/// One entry of `rules`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub operations: Vec<String>,
    pub groups: Vec<String>,
    pub versions: Vec<String>,
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`.
    pub scope: String,
}

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

fn resource_matches(rule: &Rule, resource: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == resource) && (sub == "*" || sub == subresource)
    })
}

fn scope_matches(rule: &Rule, namespaced: bool) -> bool {
    match rule.scope.as_str() {
        "Cluster" => !namespaced,
        "Namespaced" => namespaced,
        _ => true,
    }
}

/// Whether `rule` selects this operation on this resource.
pub fn rule_matches(rule: &Rule, operation: &str, rt: &ResourceType, subresource: &str) -> bool {
    listed(&rule.operations, operation)
        && listed(&rule.groups, &rt.group)
        && listed(&rule.versions, &rt.version)
        && resource_matches(rule, &rt.plural, subresource)
        && scope_matches(rule, rt.namespaced)
}

/// Whether some rule could select some operation (other than CONNECT) on this resource.
pub fn rules_may_match(rules: &[Rule], rt: &ResourceType, subresource: &str) -> bool {
    rules.iter().any(|r| {
        ["CREATE", "UPDATE", "DELETE"]
            .iter()
            .any(|op| rule_matches(r, op, rt, subresource))
    })
}

/// Whether a `metav1.LabelSelector` (as JSON) selects these labels. An empty selector selects
/// everything; an unknown operator selects nothing.
pub fn selector_matches(selector: &Value, labels: Option<&Value>) -> bool {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(want) = selector.get("matchLabels").and_then(Value::as_object)
        && !want.iter().all(|(k, v)| label(k) == v.as_str())
    {
        return false;
    }
    let exprs = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    exprs.iter().all(|e| {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let have = label(key);
        match e.get("operator").and_then(Value::as_str) {
            Some("In") => have.is_some_and(|h| values.contains(&h)),
            Some("NotIn") => have.is_none_or(|h| !values.contains(&h)),
            Some("Exists") => have.is_some(),
            Some("DoesNotExist") => have.is_none(),
            _ => false,
        }
    })
}

fn labels_of(obj: Option<&Value>) -> Option<&Value> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
}

/// `objectSelector`: the new or the old object matches.
pub fn object_matches(selector: &Value, new: Option<&Value>, old: Option<&Value>) -> bool {
    if is_empty(selector) {
        return true;
    }
    [new, old]
        .into_iter()
        .flatten()
        .any(|o| selector_matches(selector, labels_of(Some(o))))
}

/// Whether a selector has no requirements.
pub fn is_empty(selector: &Value) -> bool {
    let none = |k: &str| {
        selector.get(k).is_none_or(|v| match v {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        })
    };
    none("matchLabels") && none("matchExpressions")
}

/// `namespaceSelector`. Cluster-scoped objects other than namespaces always match; a Namespace is
/// matched by its own labels; other objects by their namespace's labels (`namespace` is the stored
/// Namespace object, fetched only when the selector is not empty).
pub fn namespace_matches(
    selector: &Value,
    rt: &ResourceType,
    new: Option<&Value>,
    old: Option<&Value>,
    namespace: impl FnOnce() -> Option<Value>,
) -> bool {
    let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
    if is_empty(selector) || (!rt.namespaced && !is_namespace) {
        return true;
    }
    if is_namespace {
        return selector_matches(selector, labels_of(new.or(old)));
    }
    let ns = namespace();
    selector_matches(selector, labels_of(ns.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    fn rule(ops: &[&str], groups: &[&str], res: &[&str], scope: &str) -> Rule {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect();
        Rule {
            operations: v(ops),
            groups: v(groups),
            versions: v(&["*"]),
            resources: v(res),
            scope: scope.into(),
        }
    }

    fn rt(group: &str, version: &str, plural: &str) -> ResourceType {
        Registry::default()
            .lookup(group, version, plural)
            .expect("served type")
    }

    #[test]
    fn rules_match_groups_resources_subresources_operations_and_scope() {
        let deploy = rt("apps", "v1", "deployments");
        let pods = rt("", "v1", "pods");
        let ns = rt("", "v1", "namespaces");
        let r = rule(&["CREATE"], &["apps"], &["deployments"], "*");
        assert!(rule_matches(&r, "CREATE", &deploy, ""));
        assert!(!rule_matches(&r, "UPDATE", &deploy, ""));
        assert!(!rule_matches(&r, "CREATE", &deploy, "scale"));
        assert!(!rule_matches(&r, "CREATE", &pods, ""));
        let scale = rule(&["*"], &["apps"], &["deployments/scale"], "*");
        assert!(rule_matches(&scale, "UPDATE", &deploy, "scale"));
        assert!(!rule_matches(&scale, "UPDATE", &deploy, ""));
        let star = rule(&["*"], &["*"], &["*"], "*");
        assert!(rule_matches(&star, "DELETE", &pods, ""));
        assert!(!rule_matches(&star, "UPDATE", &pods, "status"));
        let all = rule(&["*"], &["*"], &["*/*"], "*");
        assert!(rule_matches(&all, "UPDATE", &pods, "status"));
        let pod_subs = rule(&["*"], &[""], &["pods/*"], "*");
        assert!(rule_matches(&pod_subs, "UPDATE", &pods, "status"));
        assert!(rule_matches(&pod_subs, "UPDATE", &pods, ""));
        let cluster = rule(&["*"], &["*"], &["*"], "Cluster");
        assert!(rule_matches(&cluster, "CREATE", &ns, ""));
        assert!(!rule_matches(&cluster, "CREATE", &pods, ""));
        let namespaced = rule(&["*"], &["*"], &["*"], "Namespaced");
        assert!(!rule_matches(&namespaced, "CREATE", &ns, ""));
        assert!(rule_matches(&namespaced, "CREATE", &pods, ""));
        assert!(rules_may_match(&[r], &deploy, ""));
        let connect = rule(&["CONNECT"], &["*"], &["*/*"], "*");
        assert!(!rules_may_match(&[connect], &pods, "exec"));
    }

    #[test]
    fn label_selectors() {
        let labels = json!({"app": "web", "tier": "front"});
        let sel = |s: Value| selector_matches(&s, Some(&labels));
        assert!(sel(json!({})));
        assert!(sel(json!({"matchLabels": {"app": "web"}})));
        assert!(!sel(json!({"matchLabels": {"app": "db"}})));
        let expr = |op: &str, vals: &[&str]| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": vals}]});
        assert!(sel(expr("In", &["front", "back"])));
        assert!(!sel(expr("NotIn", &["front"])));
        assert!(sel(expr("Exists", &[])));
        assert!(!sel(expr("DoesNotExist", &[])));
        assert!(!sel(expr("Bogus", &[])));
        assert!(!selector_matches(
            &json!({"matchLabels": {"app": "web"}}),
            None
        ));
    }

    #[test]
    fn object_and_namespace_selectors() {
        let sel = json!({"matchLabels": {"webhook": "on"}});
        let on = json!({"metadata": {"labels": {"webhook": "on"}}});
        let off = json!({"metadata": {"labels": {"webhook": "off"}}});
        assert!(object_matches(&sel, Some(&off), Some(&on)));
        assert!(!object_matches(&sel, Some(&off), None));
        assert!(object_matches(&json!({}), Some(&off), None));
        let pods = rt("", "v1", "pods");
        let nodes = rt("", "v1", "nodes");
        let namespaces = rt("", "v1", "namespaces");
        let fetch = |v: Value| move || Some(v);
        assert!(namespace_matches(
            &sel,
            &pods,
            Some(&off),
            None,
            fetch(on.clone())
        ));
        assert!(!namespace_matches(
            &sel,
            &pods,
            Some(&on),
            None,
            fetch(off.clone())
        ));
        assert!(!namespace_matches(&sel, &pods, Some(&on), None, || None));
        assert!(namespace_matches(&sel, &nodes, Some(&off), None, || None));
        assert!(namespace_matches(
            &sel,
            &namespaces,
            Some(&on),
            None,
            || None
        ));
        assert!(!namespace_matches(
            &sel,
            &namespaces,
            Some(&off),
            None,
            || None
        ));
    }
}
