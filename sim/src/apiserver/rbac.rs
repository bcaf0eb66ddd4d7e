//! RBAC authorization as kube-apiserver evaluates it: ClusterRoleBindings everywhere, RoleBindings
//! in their namespace (to a Role there or a ClusterRole), subjects by User, Group or
//! ServiceAccount; rules match verbs, API groups, resources (`pods/status`, `*/scale`),
//! resourceNames and non-resource URLs (`/healthz/*`); aggregated ClusterRoles read through
//! their selectors. `system:masters` skips it; `--no-rbac` turns it off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::attributes::Attributes;
use super::identity::UserInfo;
use crate::admission::matching::selector_matches;
use crate::app::App;
use crate::status::ApiError;

/// Allows the request, or answers the apiserver's 403.
pub fn authorize(app: &App, a: &Attributes) -> Result<(), ApiError> {
    if !app.rbac || a.user.is_master() {
        return Ok(());
    }
    match decide(app, a)? {
        Some(reason) => {
            app.rbac_usage.record(a, &reason);
            Ok(())
        }
        None => Err(a.forbidden()),
    }
}

/// The binding that allows the request (as the apiserver's `reason`), or `None`.
pub fn decide(app: &App, a: &Attributes) -> Result<Option<String>, ApiError> {
    let mut allowed = None;
    visit_rules(app, &a.user, &a.namespace, |source, rule| {
        if rule_allows(rule, a) {
            allowed = Some(format!("RBAC: allowed by {source}"));
            return false;
        }
        true
    })?;
    Ok(allowed)
}

/// Every rule that applies to the user in `namespace` (cluster-wide ones always), for
/// SelfSubjectRulesReview.
pub fn rules_of(app: &App, user: &UserInfo, namespace: &str) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::new();
    visit_rules(app, user, namespace, |_, rule| {
        out.push(rule.clone());
        true
    })?;
    Ok(out)
}

const KEYS: [&str; 4] = [
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/clusterrolebindings",
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/rolebindings",
];

/// The RBAC objects, read once per change of any of them.
pub struct Policy {
    /// Each ClusterRole's rules, aggregation included (as the aggregation controller fills them).
    cluster_role_rules: HashMap<String, Vec<Value>>,
    cluster_bindings: Vec<Value>,
    /// Role rules by (namespace, name).
    roles: HashMap<(String, String), Vec<Value>>,
    /// RoleBindings by namespace.
    bindings: HashMap<String, Vec<Value>>,
}

/// The current [`Policy`], reloaded when the store has published a change of an RBAC kind since.
#[derive(Default)]
pub struct PolicyCache(Mutex<Option<(u64, Arc<Policy>)>>);

fn stamp(store: &crate::storage::Store) -> u64 {
    let hub = store.hub();
    KEYS.iter().map(|k| hub.last_change(k)).max().unwrap_or(0)
}

impl PolicyCache {
    /// Whether the cached policy is current, so evaluating needs no store read.
    pub fn is_fresh(&self, app: &App) -> bool {
        let stamp = stamp(&app.store);
        self.0
            .lock()
            .is_ok_and(|g| g.as_ref().is_some_and(|(at, _)| *at == stamp))
    }

    fn get(&self, app: &App) -> Result<Arc<Policy>, ApiError> {
        let stamp = stamp(&app.store);
        if let Ok(guard) = self.0.lock()
            && let Some((at, policy)) = guard.as_ref()
            && *at == stamp
        {
            return Ok(policy.clone());
        }
        let policy = Arc::new(Policy::load(app)?);
        if let Ok(mut guard) = self.0.lock() {
            *guard = Some((stamp, policy.clone()));
        }
        Ok(policy)
    }
}

fn list(app: &App, key: &str) -> Result<Vec<Value>, ApiError> {
    let (items, _) = app.store.list(key, None, None)?;
    Ok(items.into_iter().map(|s| s.object).collect())
}

fn name_of(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap_or("").to_string()
}

/// A ClusterRole's rules with those of every ClusterRole its `aggregationRule` selects, and
/// theirs in turn (as the aggregation controller's repeated passes leave them); `seen` guards
/// against cycles.
fn aggregated(roles: &[Value], at: usize, seen: &mut Vec<usize>) -> Vec<Value> {
    let role = &roles[at];
    let mut all = role["rules"].as_array().cloned().unwrap_or_default();
    let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    else {
        return all;
    };
    for (i, other) in roles.iter().enumerate() {
        let labels = other.pointer("/metadata/labels");
        if !seen.contains(&i) && selectors.iter().any(|s| selector_matches(s, labels)) {
            seen.push(i);
            all.extend(aggregated(roles, i, seen));
        }
    }
    all
}

impl Policy {
    fn load(app: &App) -> Result<Policy, ApiError> {
        let cluster_roles = list(app, KEYS[0])?;
        let rules = |r: &Value| r["rules"].as_array().cloned().unwrap_or_default();
        let mut cluster_role_rules = HashMap::new();
        for (i, role) in cluster_roles.iter().enumerate() {
            let mut seen = vec![i];
            cluster_role_rules.insert(name_of(role), aggregated(&cluster_roles, i, &mut seen));
        }
        let roles = list(app, KEYS[2])?
            .iter()
            .map(|r| {
                let ns = r["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                ((ns, name_of(r)), rules(r))
            })
            .collect();
        let mut bindings: HashMap<String, Vec<Value>> = HashMap::new();
        for b in list(app, KEYS[3])? {
            let ns = b["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string();
            bindings.entry(ns).or_default().push(b);
        }
        Ok(Policy {
            cluster_role_rules,
            cluster_bindings: list(app, KEYS[1])?,
            roles,
            bindings,
        })
    }
}

/// Calls `f(source, rule)` for each rule granted to `user`; stops when `f` returns false.
fn visit_rules(
    app: &App,
    user: &UserInfo,
    namespace: &str,
    mut f: impl FnMut(&str, &Value) -> bool,
) -> Result<(), ApiError> {
    let policy = app.rbac_policy.get(app)?;
    let none = Vec::new();
    for b in &policy.cluster_bindings {
        let Some(subject) = applies(b, user, "") else {
            continue;
        };
        let role = b["roleRef"]["name"].as_str().unwrap_or("");
        let source = format!(
            "ClusterRoleBinding \"{}\" of ClusterRole \"{role}\" to {subject}",
            name_of(b)
        );
        for rule in policy.cluster_role_rules.get(role).unwrap_or(&none) {
            if !f(&source, rule) {
                return Ok(());
            }
        }
    }
    if namespace.is_empty() {
        return Ok(());
    }
    for b in policy.bindings.get(namespace).unwrap_or(&none) {
        let Some(subject) = applies(b, user, namespace) else {
            continue;
        };
        let role = b["roleRef"]["name"].as_str().unwrap_or("");
        let kind = b["roleRef"]["kind"].as_str().unwrap_or("");
        let rules = match kind {
            "ClusterRole" => policy.cluster_role_rules.get(role),
            _ => policy.roles.get(&(namespace.to_string(), role.to_string())),
        };
        let source = format!(
            "RoleBinding \"{}/{namespace}\" of {kind} \"{role}\" to {subject}",
            name_of(b)
        );
        for rule in rules.unwrap_or(&none) {
            if !f(&source, rule) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The subject of a binding that names the user (`User "x"`, `Group "g"`, `ServiceAccount "n/ns"`).
fn applies(binding: &Value, user: &UserInfo, binding_ns: &str) -> Option<String> {
    binding["subjects"].as_array()?.iter().find_map(|s| {
        let name = s["name"].as_str().unwrap_or("");
        match s["kind"].as_str().unwrap_or("") {
            "User" if user.name == name => Some(format!("User \"{name}\"")),
            "Group" if user.groups.iter().any(|g| g == name) => Some(format!("Group \"{name}\"")),
            "ServiceAccount" => {
                let ns = s["namespace"]
                    .as_str()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(binding_ns);
                (user.name == format!("system:serviceaccount:{ns}:{name}"))
                    .then(|| format!("ServiceAccount \"{name}/{ns}\""))
            }
            _ => None,
        }
    })
}

fn has(list: &Value, want: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v == "*" || v == want))
}

/// Whether one PolicyRule allows the request.
pub fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    if !has(&rule["verbs"], &a.verb) {
        return false;
    }
    if !a.resource_request {
        return rule["nonResourceURLs"].as_array().is_some_and(|urls| {
            urls.iter().filter_map(Value::as_str).any(|u| {
                u == "*"
                    || u == a.path
                    || u.strip_suffix('*').is_some_and(|p| a.path.starts_with(p))
            })
        });
    }
    if !has(&rule["apiGroups"], &a.group) {
        return false;
    }
    let full = a.full_resource();
    let resource_ok = rule["resources"].as_array().is_some_and(|rs| {
        rs.iter().filter_map(Value::as_str).any(|r| {
            r == "*"
                || r == full
                || (!a.subresource.is_empty() && r == format!("*/{}", a.subresource))
        })
    });
    if !resource_ok {
        return false;
    }
    match rule["resourceNames"].as_array() {
        Some(names) if !names.is_empty() => names.iter().any(|n| n == &json!(a.name)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa() -> UserInfo {
        UserInfo::service_account("d", "bot", "")
    }

    #[test]
    fn rules_match_as_the_apiserver_matches_them() {
        let rule = json!({"apiGroups": [""], "resources": ["pods", "pods/status"], "verbs": ["get", "watch"]});
        let u = sa();
        let get = Attributes::resource(&u, "get", "", "pods", "", "d", "p");
        assert!(rule_allows(&rule, &get));
        let list = Attributes::resource(&u, "list", "", "pods", "", "d", "");
        assert!(!rule_allows(&rule, &list), "list is not watch");
        let status = Attributes::resource(&u, "get", "", "pods", "status", "d", "p");
        assert!(rule_allows(&rule, &status));
        let log = Attributes::resource(&u, "get", "", "pods", "log", "d", "p");
        assert!(!rule_allows(&rule, &log), "pods does not grant pods/log");
        let scale = json!({"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["*"]});
        let a = Attributes::resource(&u, "update", "apps", "deployments", "scale", "d", "w");
        assert!(rule_allows(&scale, &a));
        let named = json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cfg"], "verbs": ["get", "list"]});
        let other = Attributes::resource(&u, "get", "", "configmaps", "", "d", "other");
        assert!(!rule_allows(&named, &other));
        let list_cm = Attributes::resource(&u, "list", "", "configmaps", "", "d", "");
        assert!(
            !rule_allows(&named, &list_cm),
            "resourceNames never match a list"
        );
        let urls = json!({"nonResourceURLs": ["/healthz/*", "/version"], "verbs": ["get"]});
        assert!(rule_allows(
            &urls,
            &Attributes::non_resource(&u, "get", "/healthz/etcd")
        ));
        assert!(!rule_allows(
            &urls,
            &Attributes::non_resource(&u, "get", "/metrics")
        ));
    }

    #[test]
    fn service_account_subjects_default_to_the_binding_namespace() {
        let b = json!({"subjects": [{"kind": "ServiceAccount", "name": "bot"}]});
        assert_eq!(
            applies(&b, &sa(), "d").as_deref(),
            Some("ServiceAccount \"bot/d\"")
        );
        assert!(applies(&b, &sa(), "other").is_none());
    }
}
