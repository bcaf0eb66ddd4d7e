//! RBAC authorization as kube-apiserver evaluates it: ClusterRoleBindings everywhere, RoleBindings
//! in their namespace (to a Role there or a ClusterRole), subjects by User, Group or
//! ServiceAccount; rules match verbs, API groups, resources (`pods/status`, `*/scale`),
//! resourceNames and non-resource URLs (`/healthz/*`); aggregated ClusterRoles read through
//! their selectors. `system:masters` skips it; `--no-rbac` turns it off.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::attributes::Attributes;
use super::identity::UserInfo;
use crate::admission::matching::selector_matches;
use crate::apiserver::app::App;
use crate::status::ApiError;

/// Allows the request, or answers the apiserver's 403.
pub fn authorize(app: &App, a: &Attributes) -> Result<(), ApiError> {
    if !app.rbac || a.user.is_master() {
        return Ok(());
    }
    let policy = app.rbac_policy.get(app)?;
    authorize_by(app, &policy, a)
}

/// [`authorize`] by a policy already read ([`PolicyCache::current`]): reads nothing from the store.
pub fn authorize_by(app: &App, policy: &Policy, a: &Attributes) -> Result<(), ApiError> {
    if !app.rbac || a.user.is_master() {
        return Ok(());
    }
    let mut granted = false;
    visit_rules(policy, &a.user, &a.namespace, |grant, rule| {
        if allows(rule, a) {
            granted = true;
            // The reason is written out only when a test records it.
            app.rbac_usage.record(a, || grant.to_string());
            return false;
        }
        true
    });
    if granted { Ok(()) } else { Err(a.forbidden()) }
}

/// The binding that allows the request (as the apiserver's `reason`), or `None`.
pub fn decide(app: &App, a: &Attributes) -> Result<Option<String>, ApiError> {
    let policy = app.rbac_policy.get(app)?;
    let mut allowed = None;
    visit_rules(&policy, &a.user, &a.namespace, |grant, rule| {
        if allows(rule, a) {
            allowed = Some(format!("RBAC: allowed by {grant}"));
            return false;
        }
        true
    });
    Ok(allowed)
}

/// Every rule that applies to the user in `namespace` (cluster-wide ones always), for
/// SelfSubjectRulesReview.
pub fn rules_of(app: &App, user: &UserInfo, namespace: &str) -> Result<Vec<Value>, ApiError> {
    let policy = app.rbac_policy.get(app)?;
    let mut out = Vec::new();
    visit_rules(&policy, user, namespace, |_, rule| {
        out.push(rule.raw.clone());
        true
    });
    Ok(out)
}

const KEYS: [&str; 4] = [
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/clusterrolebindings",
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/rolebindings",
];

/// The RBAC objects, read once per change of any of them, their rules and subjects read out of the JSON
/// and each binding's role resolved then, so that evaluating a request looks nothing up by key but
/// the namespace's RoleBindings.
pub struct Policy {
    cluster_bindings: Vec<Binding>,
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

/// A RoleBinding's or ClusterRoleBinding's name, role and subjects, and the rules of its role
/// (shared by every binding of the role; none when the role does not exist).
struct Binding {
    name: String,
    role_kind: String,
    role: String,
    subjects: Vec<BindingSubject>,
    rules: Arc<[Rule]>,
}

/// A binding's subject, as matched against a user.
enum BindingSubject {
    User(String),
    Group(String),
    /// `user` is `system:serviceaccount:NAMESPACE:NAME`, the namespace defaulted to the binding's.
    ServiceAccount {
        user: String,
        name: String,
        namespace: String,
    },
    /// A kind RBAC does not know: matches no one.
    Other,
}

impl Binding {
    /// A binding as stored, with the rules of its role; `namespace` is a RoleBinding's own (`""` for a
    /// ClusterRoleBinding).
    fn of(binding: &Value, namespace: &str, rules: Arc<[Rule]>) -> Binding {
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        let subject = |s: &Value| match s["kind"].as_str().unwrap_or("") {
            "User" => BindingSubject::User(text(&s["name"])),
            "Group" => BindingSubject::Group(text(&s["name"])),
            "ServiceAccount" => {
                let name = text(&s["name"]);
                let namespace = match s["namespace"].as_str() {
                    Some(ns) if !ns.is_empty() => ns.to_string(),
                    _ => namespace.to_string(),
                };
                BindingSubject::ServiceAccount {
                    user: format!("system:serviceaccount:{namespace}:{name}"),
                    name,
                    namespace,
                }
            }
            _ => BindingSubject::Other,
        };
        Binding {
            name: name_of(binding),
            role_kind: text(&binding["roleRef"]["kind"]),
            role: text(&binding["roleRef"]["name"]),
            subjects: binding["subjects"]
                .as_array()
                .map(|subjects| subjects.iter().map(subject).collect())
                .unwrap_or_default(),
            rules,
        }
    }
}

/// The current [`Policy`], reloaded when the store has published a change of an RBAC kind since.
#[derive(Default)]
pub struct PolicyCache(RwLock<Option<(u64, Arc<Policy>)>>);

fn stamp(store: &crate::storage::Store) -> u64 {
    store.hub().last_change_of(&KEYS)
}

impl PolicyCache {
    /// The cached policy if it was read at `stamp`.
    fn cached(&self, stamp: u64) -> Option<Arc<Policy>> {
        let guard = self.0.read().ok()?;
        let (at, policy) = guard.as_ref()?;
        (*at == stamp).then(|| policy.clone())
    }

    /// The cached policy if it is current, so that evaluating needs no store read; `None` when the
    /// store has changed an RBAC object since (then [`PolicyCache::get`] reads it again).
    pub fn current(&self, app: &App) -> Option<Arc<Policy>> {
        self.cached(stamp(&app.backend.store))
    }

    /// The current policy, read from the store when it changed.
    pub fn get(&self, app: &App) -> Result<Arc<Policy>, ApiError> {
        // Stamped before reading, so a change made during the read makes the next request read again.
        let stamp = stamp(&app.backend.store);
        if let Some(policy) = self.cached(stamp) {
            return Ok(policy);
        }
        let policy = Arc::new(Policy::load(app)?);
        if let Ok(mut guard) = self.0.write() {
            *guard = Some((stamp, policy.clone()));
        }
        Ok(policy)
    }
}

fn list(app: &App, key: &str) -> Result<Vec<Value>, ApiError> {
    let (items, _) = app.backend.store.list(key, None, None)?;
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
        let mut cluster_role_rules: HashMap<String, Arc<[Rule]>> = HashMap::new();
        for (i, role) in cluster_roles.iter().enumerate() {
            let mut seen = vec![i];
            let all = aggregated(&cluster_roles, i, &mut seen);
            cluster_role_rules.insert(name_of(role), all.iter().map(Rule::of).collect());
        }
        let roles: HashMap<(String, String), Arc<[Rule]>> = list(app, KEYS[2])?
            .iter()
            .map(|r| {
                let rules = r["rules"]
                    .as_array()
                    .map(|rules| rules.iter().map(Rule::of).collect())
                    .unwrap_or_default();
                ((namespace_of(r), name_of(r)), rules)
            })
            .collect();
        let no_rules: Arc<[Rule]> = Arc::new([]);
        let role_rules = |binding: &Value, namespace: &str| {
            let role = binding["roleRef"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let found = match binding["roleRef"]["kind"].as_str() {
                Some("ClusterRole") => cluster_role_rules.get(&role),
                _ if namespace.is_empty() => None,
                _ => roles.get(&(namespace.to_string(), role)),
            };
            found.unwrap_or(&no_rules).clone()
        };
        let mut bindings: HashMap<String, Vec<Binding>> = HashMap::new();
        for b in list(app, KEYS[3])? {
            let ns = namespace_of(&b);
            let binding = Binding::of(&b, &ns, role_rules(&b, &ns));
            bindings.entry(ns).or_default().push(binding);
        }
        let cluster_bindings = list(app, KEYS[1])?
            .iter()
            .map(|b| Binding::of(b, "", role_rules(b, "")))
            .collect();
        Ok(Policy {
            cluster_bindings,
            bindings,
        })
    }
}

fn namespace_of(v: &Value) -> String {
    v["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The binding that grants a rule, written as the apiserver's reasons write it.
enum Grant<'a> {
    Cluster {
        binding: &'a Binding,
        subject: Subject<'a>,
    },
    Namespaced {
        binding: &'a Binding,
        namespace: &'a str,
        subject: Subject<'a>,
    },
}

impl std::fmt::Display for Grant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Grant::Cluster { binding, subject } => write!(
                f,
                "ClusterRoleBinding \"{}\" of ClusterRole \"{}\" to {subject}",
                binding.name, binding.role
            ),
            Grant::Namespaced {
                binding,
                namespace,
                subject,
            } => write!(
                f,
                "RoleBinding \"{}/{namespace}\" of {} \"{}\" to {subject}",
                binding.name, binding.role_kind, binding.role
            ),
        }
    }
}

/// Calls `f(grant, rule)` for each rule granted to `user`; stops when `f` returns false.
fn visit_rules(
    policy: &Policy,
    user: &UserInfo,
    namespace: &str,
    mut f: impl FnMut(&Grant<'_>, &Rule) -> bool,
) {
    for b in &policy.cluster_bindings {
        let Some(subject) = applies(b, user) else {
            continue;
        };
        let grant = Grant::Cluster {
            binding: b,
            subject,
        };
        for rule in b.rules.iter() {
            if !f(&grant, rule) {
                return;
            }
        }
    }
    if namespace.is_empty() {
        return;
    }
    for b in policy
        .bindings
        .get(namespace)
        .map_or(&[][..], Vec::as_slice)
    {
        let Some(subject) = applies(b, user) else {
            continue;
        };
        let grant = Grant::Namespaced {
            binding: b,
            namespace,
            subject,
        };
        for rule in b.rules.iter() {
            if !f(&grant, rule) {
                return;
            }
        }
    }
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
fn applies<'a>(binding: &'a Binding, user: &UserInfo) -> Option<Subject<'a>> {
    binding.subjects.iter().find_map(|s| match s {
        BindingSubject::User(name) if user.name == *name => Some(Subject::User(name)),
        BindingSubject::Group(name) if user.groups.iter().any(|g| g == name) => {
            Some(Subject::Group(name))
        }
        BindingSubject::ServiceAccount {
            user: sa_user,
            name,
            namespace,
        } if user.name == *sa_user => Some(Subject::ServiceAccount { name, namespace }),
        _ => None,
    })
}

fn has(list: &[String], want: &str) -> bool {
    list.iter().any(|v| v == "*" || v == want)
}

/// Whether one PolicyRule allows the request.
#[cfg(test)]
fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    allows(&Rule::of(rule), a)
}

/// Whether a rule's resource (`pods`, `pods/status`, `*/scale`, `*`) covers the request's.
fn resource_matches(rule_resource: &str, resource: &str, subresource: &str) -> bool {
    if rule_resource == "*" {
        return true;
    }
    if subresource.is_empty() {
        return rule_resource == resource;
    }
    match rule_resource.split_once('/') {
        Some((r, sub)) => sub == subresource && (r == "*" || r == resource),
        None => false,
    }
}

/// Whether one PolicyRule allows the request.
fn allows(rule: &Rule, a: &Attributes) -> bool {
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
    let resource_ok = rule
        .resources
        .iter()
        .any(|r| resource_matches(r, &a.resource, &a.subresource));
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
            applies(&Binding::of(&b, "d", Arc::new([])), &sa())
                .map(|s| s.to_string())
                .as_deref(),
            Some("ServiceAccount \"bot/d\"")
        );
        assert!(applies(&Binding::of(&b, "other", Arc::new([])), &sa()).is_none());
        let b = Binding::of(&b, "d", Arc::new([]));
        // The user name is compared whole: a namespace or name that only starts alike is another account.
        for other in [("dx", "bot"), ("d", "bot2"), ("", "d:bot")] {
            let user = UserInfo::service_account(other.0, other.1, "");
            assert!(applies(&b, &user).is_none(), "{other:?}");
        }
        let named =
            json!({"subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "d"}]});
        assert!(applies(&Binding::of(&named, "other", Arc::new([])), &sa()).is_some());
    }

    #[test]
    fn resources_match_with_and_without_subresources() {
        assert!(resource_matches("*", "pods", "status"));
        assert!(resource_matches("pods", "pods", ""));
        assert!(!resource_matches("pods", "pods", "status"));
        assert!(resource_matches("pods/status", "pods", "status"));
        assert!(!resource_matches("pods/status", "pods", ""));
        assert!(!resource_matches("pods/status", "pods", "log"));
        assert!(!resource_matches("pod/status", "pods", "status"));
        assert!(resource_matches("*/scale", "deployments", "scale"));
        assert!(!resource_matches("*/scale", "deployments", ""));
        assert!(!resource_matches("podsx", "pods", ""));
    }
}
