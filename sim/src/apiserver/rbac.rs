//! RBAC authorization as kube-apiserver evaluates it: ClusterRoleBindings everywhere, RoleBindings
//! in their namespace (to a Role there or a ClusterRole), subjects by User, Group or
//! ServiceAccount; rules match verbs, API groups, resources (`pods/status`, `*/scale`),
//! resourceNames and non-resource URLs (`/healthz/*`); aggregated ClusterRoles read through
//! their selectors. `system:masters` skips it; `--no-rbac` turns it off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

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
    let full = a.full_resource();
    visit_rules(app, &a.user, &a.namespace, |source, rule| {
        if allows(rule, a, &full) {
            allowed = Some(format!("RBAC: allowed by {}", source()));
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
        out.push(rule.raw.clone());
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

/// The RBAC objects, read once per change of any of them, their rules and subjects read out of the JSON
/// then, so that evaluating a request looks nothing up by key.
pub struct Policy {
    /// Each ClusterRole's rules, aggregation included (as the aggregation controller fills them).
    cluster_role_rules: HashMap<String, Vec<Rule>>,
    cluster_bindings: Vec<Binding>,
    /// Role rules by (namespace, name).
    roles: HashMap<(String, String), Vec<Rule>>,
    /// RoleBindings by namespace.
    bindings: HashMap<String, Vec<Binding>>,
}

/// A PolicyRule's lists, and the rule as stored (for SelfSubjectRulesReview).
struct Rule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    /// `resourceNames` when the rule names any.
    resource_names: Option<Vec<String>>,
    /// `nonResourceURLs` when the rule has the field.
    non_resource_urls: Option<Vec<String>>,
    raw: Value,
}

/// The strings of a JSON list (anything else in it is left out).
fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Rule {
    fn of(rule: &Value) -> Rule {
        Rule {
            verbs: strings(&rule["verbs"]),
            api_groups: strings(&rule["apiGroups"]),
            resources: strings(&rule["resources"]),
            resource_names: rule["resourceNames"]
                .as_array()
                .filter(|names| !names.is_empty())
                .map(|_| strings(&rule["resourceNames"])),
            non_resource_urls: rule["nonResourceURLs"]
                .as_array()
                .map(|_| strings(&rule["nonResourceURLs"])),
            raw: rule.clone(),
        }
    }
}

/// A RoleBinding's or ClusterRoleBinding's name, role and subjects.
struct Binding {
    name: String,
    role_kind: String,
    role: String,
    subjects: Vec<BindingSubject>,
}

struct BindingSubject {
    kind: String,
    name: String,
    namespace: String,
}

impl Binding {
    fn of(binding: &Value) -> Binding {
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        Binding {
            name: name_of(binding),
            role_kind: text(&binding["roleRef"]["kind"]),
            role: text(&binding["roleRef"]["name"]),
            subjects: binding["subjects"]
                .as_array()
                .map(|subjects| {
                    subjects
                        .iter()
                        .map(|s| BindingSubject {
                            kind: text(&s["kind"]),
                            name: text(&s["name"]),
                            namespace: text(&s["namespace"]),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
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
        let rules = |r: &Value| {
            r["rules"]
                .as_array()
                .map(|rules| rules.iter().map(Rule::of).collect())
                .unwrap_or_default()
        };
        let mut cluster_role_rules = HashMap::new();
        for (i, role) in cluster_roles.iter().enumerate() {
            let mut seen = vec![i];
            let all = aggregated(&cluster_roles, i, &mut seen);
            cluster_role_rules.insert(name_of(role), all.iter().map(Rule::of).collect());
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
        let mut bindings: HashMap<String, Vec<Binding>> = HashMap::new();
        for b in list(app, KEYS[3])? {
            let ns = b["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string();
            bindings.entry(ns).or_default().push(Binding::of(&b));
        }
        Ok(Policy {
            cluster_role_rules,
            cluster_bindings: list(app, KEYS[1])?.iter().map(Binding::of).collect(),
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
    mut f: impl FnMut(&dyn Fn() -> String, &Rule) -> bool,
) -> Result<(), ApiError> {
    let policy = app.rbac_policy.get(app)?;
    let none = Vec::new();
    for b in &policy.cluster_bindings {
        let Some(subject) = applies(b, user, "") else {
            continue;
        };
        let role = b.role.as_str();
        // Written out only for the rule that allows the request.
        let source = || {
            format!(
                "ClusterRoleBinding \"{}\" of ClusterRole \"{role}\" to {subject}",
                b.name
            )
        };
        for rule in policy.cluster_role_rules.get(role).unwrap_or(&none) {
            if !f(&source, rule) {
                return Ok(());
            }
        }
    }
    if namespace.is_empty() {
        return Ok(());
    }
    for b in policy
        .bindings
        .get(namespace)
        .map_or(&[][..], Vec::as_slice)
    {
        let Some(subject) = applies(b, user, namespace) else {
            continue;
        };
        let role = b.role.as_str();
        let kind = b.role_kind.as_str();
        let rules = match kind {
            "ClusterRole" => policy.cluster_role_rules.get(role),
            _ => policy.roles.get(&(namespace.to_string(), role.to_string())),
        };
        let source = || {
            format!(
                "RoleBinding \"{}/{namespace}\" of {kind} \"{role}\" to {subject}",
                b.name
            )
        };
        for rule in rules.unwrap_or(&none) {
            if !f(&source, rule) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A binding's subject that names the user, written as the apiserver's reasons write it (`User "x"`,
/// `Group "g"`, `ServiceAccount "n/ns"`); nothing is allocated to find it.
enum Subject<'a> {
    User(&'a str),
    Group(&'a str),
    ServiceAccount { name: &'a str, namespace: &'a str },
}

impl std::fmt::Display for Subject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::User(name) => write!(f, "User \"{name}\""),
            Subject::Group(name) => write!(f, "Group \"{name}\""),
            Subject::ServiceAccount { name, namespace } => {
                write!(f, "ServiceAccount \"{name}/{namespace}\"")
            }
        }
    }
}

/// The subject of a binding that names the user.
fn applies<'a>(binding: &'a Binding, user: &UserInfo, binding_ns: &'a str) -> Option<Subject<'a>> {
    binding.subjects.iter().find_map(|s| {
        let name = s.name.as_str();
        match s.kind.as_str() {
            "User" if user.name == name => Some(Subject::User(name)),
            "Group" if user.groups.iter().any(|g| g == name) => Some(Subject::Group(name)),
            "ServiceAccount" => {
                let ns = if s.namespace.is_empty() {
                    binding_ns
                } else {
                    s.namespace.as_str()
                };
                // `system:serviceaccount:NS:NAME`, compared in place.
                let named = user
                    .name
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.strip_prefix(ns))
                    .and_then(|rest| rest.strip_prefix(':'))
                    == Some(name);
                named.then_some(Subject::ServiceAccount {
                    name,
                    namespace: ns,
                })
            }
            _ => None,
        }
    })
}

fn has(list: &[String], want: &str) -> bool {
    list.iter().any(|v| v == "*" || v == want)
}

/// Whether one PolicyRule allows the request.
#[cfg(test)]
fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    allows(&Rule::of(rule), a, &a.full_resource())
}

/// Whether one PolicyRule allows the request, with the request's `resource/subresource` worked out
/// once per request.
fn allows(rule: &Rule, a: &Attributes, full: &str) -> bool {
    if !has(&rule.verbs, &a.verb) {
        return false;
    }
    if !a.resource_request {
        return rule.non_resource_urls.as_ref().is_some_and(|urls| {
            urls.iter().any(|u| {
                u == "*"
                    || *u == a.path
                    || u.strip_suffix('*').is_some_and(|p| a.path.starts_with(p))
            })
        });
    }
    if !has(&rule.api_groups, &a.group) {
        return false;
    }
    let resource_ok = rule.resources.iter().any(|r| {
        r == "*"
            || r == full
            || (!a.subresource.is_empty() && r.strip_prefix("*/") == Some(&a.subresource))
    });
    if !resource_ok {
        return false;
    }
    match &rule.resource_names {
        Some(names) => names.contains(&a.name),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            applies(&Binding::of(&b), &sa(), "d")
                .map(|s| s.to_string())
                .as_deref(),
            Some("ServiceAccount \"bot/d\"")
        );
        let b = Binding::of(&b);
        assert!(applies(&b, &sa(), "other").is_none());
        // The user name is compared whole: a namespace or name that only starts alike is another account.
        for other in [("dx", "bot"), ("d", "bot2"), ("", "d:bot")] {
            let user = UserInfo::service_account(other.0, other.1, "");
            assert!(applies(&b, &user, "d").is_none(), "{other:?}");
        }
    }
}
