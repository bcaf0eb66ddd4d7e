//! The RBAC the controllers need, derived from their declarations: get/list/watch on watched kinds,
//! patch/update and `<kind>/finalizers` with a finalizer, `<kind>/status` when status is written, the
//! declared `writes:` kinds, events create/patch where objects are watched, and the leader Lease in the
//! operator's namespace. Cluster-wide watches and cluster-scoped kinds go to the ClusterRole, the rest
//! to a Role per namespace.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;

/// One grant: verbs on a resource of an API group, cluster-wide (`namespace: None`) or in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    /// Where: `None` = the ClusterRole.
    pub namespace: Option<String>,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The resource (plural), or `plural/subresource`.
    pub resource: String,
    /// The verbs.
    pub verbs: BTreeSet<&'static str>,
}

/// The rules, merged: a ClusterRole's and one Role's per namespace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Access {
    /// The ClusterRole's rules (empty: no ClusterRole is needed).
    pub cluster: Vec<PolicyRule>,
    /// The Role's rules in each namespace.
    pub namespaced: BTreeMap<String, Vec<PolicyRule>>,
}

const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 5] = ["get", "create", "patch", "update", "delete"];

/// What one controller declaration needs (`namespaces`: where it watches; `None` = cluster-wide).
pub(crate) struct Needs<'a> {
    pub group: &'a str,
    pub plural: &'a str,
    pub namespaces: Vec<Option<String>>,
    pub finalizer: bool,
    pub status: bool,
    pub writes: &'a [(String, String)],
}

fn grant(namespace: &Option<String>, group: &str, resource: &str, verbs: &[&'static str]) -> Grant {
    Grant {
        namespace: namespace.clone(),
        group: group.to_string(),
        resource: resource.to_string(),
        verbs: verbs.iter().copied().collect(),
    }
}

pub(crate) fn grants(needs: &Needs<'_>) -> Vec<Grant> {
    let mut out = Vec::new();
    for ns in &needs.namespaces {
        out.push(grant(ns, needs.group, needs.plural, &READ));
        if needs.finalizer {
            out.push(grant(ns, needs.group, needs.plural, &["patch", "update"]));
            out.push(grant(
                ns,
                needs.group,
                &format!("{}/finalizers", needs.plural),
                &["update"],
            ));
        }
        if needs.status {
            out.push(grant(
                ns,
                needs.group,
                &format!("{}/status", needs.plural),
                &["patch", "update"],
            ));
        }
        for (group, resource) in needs.writes {
            out.push(grant(ns, group, resource, &WRITE));
        }
        out.push(grant(ns, "events.k8s.io", "events", &["create", "patch"]));
    }
    out
}

/// The Lease grant of leader election.
pub(crate) fn lease(operator_namespace: &str) -> Grant {
    grant(
        &Some(operator_namespace.to_string()),
        "coordination.k8s.io",
        "leases",
        &["get", "create", "update"],
    )
}

/// The verbs granted on each (group, resource) of one place.
type VerbsByResource = BTreeMap<(String, String), BTreeSet<&'static str>>;

/// Merges grants into rules: one rule per (group, verbs), resources sorted.
pub fn merge(grants: impl IntoIterator<Item = Grant>) -> Access {
    let mut by_place: BTreeMap<Option<String>, VerbsByResource> = BTreeMap::new();
    for g in grants {
        by_place
            .entry(g.namespace)
            .or_default()
            .entry((g.group, g.resource))
            .or_default()
            .extend(g.verbs);
    }
    let mut access = Access::default();
    for (place, resources) in by_place {
        let mut rules: BTreeMap<(String, Vec<&'static str>), BTreeSet<String>> = BTreeMap::new();
        for ((group, resource), verbs) in resources {
            rules
                .entry((group, verbs.into_iter().collect()))
                .or_default()
                .insert(resource);
        }
        let rules: Vec<PolicyRule> = rules
            .into_iter()
            .map(|((group, verbs), resources)| PolicyRule {
                api_groups: Some(vec![group]),
                resources: Some(resources.into_iter().collect()),
                verbs: verbs.into_iter().map(str::to_string).collect(),
                ..PolicyRule::default()
            })
            .collect();
        match place {
            None => access.cluster = rules,
            Some(ns) => {
                access.namespaced.insert(ns, rules);
            }
        }
    }
    access
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            api_groups: Some(vec![group.into()]),
            resources: Some(resources.iter().map(|s| s.to_string()).collect()),
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn a_finalizing_crd_controller_and_a_cluster_wide_audit_get_exactly_their_rules() {
        let writes = [(String::new(), "configmaps".to_string())];
        let lamp = Needs {
            group: "example.com",
            plural: "lamps",
            namespaces: vec![Some("lamps-system".into())],
            finalizer: true,
            status: true,
            writes: &writes,
        };
        let audit = Needs {
            group: "",
            plural: "configmaps",
            namespaces: vec![None],
            finalizer: false,
            status: false,
            writes: &[],
        };
        let mut all = grants(&lamp);
        all.extend(grants(&audit));
        all.push(lease("lamps-system"));
        let access = merge(all);
        assert_eq!(
            access.cluster,
            vec![
                rule("", &["configmaps"], &["get", "list", "watch"]),
                rule("events.k8s.io", &["events"], &["create", "patch"]),
            ]
        );
        assert_eq!(
            access.namespaced["lamps-system"],
            vec![
                rule(
                    "",
                    &["configmaps"],
                    &["create", "delete", "get", "patch", "update"]
                ),
                rule(
                    "coordination.k8s.io",
                    &["leases"],
                    &["create", "get", "update"]
                ),
                rule("events.k8s.io", &["events"], &["create", "patch"]),
                rule(
                    "example.com",
                    &["lamps"],
                    &["get", "list", "patch", "update", "watch"]
                ),
                rule("example.com", &["lamps/status"], &["patch", "update"]),
                rule("example.com", &["lamps/finalizers"], &["update"]),
            ]
        );
    }
}
