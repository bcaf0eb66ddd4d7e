//! kube-controller-manager's ClusterRole aggregation controller: a ClusterRole with an
//! `aggregationRule` gets as its stored `rules` those of every other ClusterRole its selectors pick
//! (selector by selector, the picked roles by name, each rule once), so `kubectl get clusterrole
//! admin -o yaml` lists the rules of a role labelled `aggregate-to-admin` after it is created.

use serde_json::Value;
use std::sync::Arc;

use crate::admission::matching::selector_matches;
use crate::cluster::Cluster;
use crate::util::s;

/// The store keys whose changes this controller acts on.
pub(super) const WATCHES: &[&str] = &["rbac.authorization.k8s.io/clusterroles"];

/// The field manager of its writes, as kube-controller-manager names it.
const MANAGER: &str = "clusterrole-aggregation-controller";

/// Passes over the ClusterRoles per turn: an aggregated role that is itself aggregated (`view` into
/// `edit` into `admin`) settles in one turn instead of one turn per level.
const PASSES: usize = 4;

/// The rules `role` aggregates from `roles`, or `None` when it has no aggregation rule.
fn aggregated_rules(role: &Value, roles: &[Arc<Value>]) -> Option<Vec<Value>> {
    let selectors = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?;
    let name = s(role, "/metadata/name");
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors {
        let mut picked: Vec<&Value> = roles
            .iter()
            .map(|r| &**r)
            .filter(|r| s(r, "/metadata/name") != name)
            .filter(|r| selector_matches(selector, r.pointer("/metadata/labels")))
            .collect();
        picked.sort_by(|a, b| s(a, "/metadata/name").cmp(s(b, "/metadata/name")));
        for rule in picked
            .iter()
            .filter_map(|r| r["rules"].as_array())
            .flatten()
        {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    Some(rules)
}

/// One turn: writes every aggregated ClusterRole whose stored rules differ from its selection's.
pub fn reconcile(cluster: &Cluster) {
    let Ok(cluster_roles) = cluster.rt("rbac.authorization.k8s.io", "v1", "clusterroles") else {
        return;
    };
    for _ in 0..PASSES {
        let roles = cluster.list(&cluster_roles);
        let mut wrote = false;
        for role in roles.iter() {
            let Some(rules) = aggregated_rules(role, &roles) else {
                continue;
            };
            let stored = role["rules"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            if stored == rules.as_slice() {
                continue;
            }
            let name = s(role, "/metadata/name");
            let written = cluster.update(&cluster_roles, "", name, "", MANAGER, |r| {
                r["rules"] = Value::Array(rules);
                true
            });
            wrote |= written.is_ok();
        }
        if !wrote {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(name: &str, labels: Value, rules: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    #[test]
    fn rules_come_selector_by_selector_by_name_and_once() {
        let get = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        let list = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]});
        let agg = json!({"metadata": {"name": "agg"}, "rules": [],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to": "agg"}}]}});
        let roles = vec![
            agg.clone(),
            role(
                "b",
                json!({"to": "agg"}),
                json!([list.clone(), get.clone()]),
            ),
            role("a", json!({"to": "agg"}), json!([get.clone()])),
            role("c", json!({"to": "other"}), json!([{"verbs": ["delete"]}])),
        ]
        .into_iter()
        .map(Arc::new)
        .collect::<Vec<_>>();
        assert_eq!(aggregated_rules(&agg, &roles), Some(vec![get, list]));
        assert_eq!(aggregated_rules(&roles[1], &roles), None);
    }
}
