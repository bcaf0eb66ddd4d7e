//! The RBAC the controllers need, derived from their declarations, verb by verb what the runtime sends:
//! list/watch on watched kinds (the reflector; handlers read its `Store`, not `get`), patch on the kind
//! with a finalizer (kube's finalizer helper JSON-patches `metadata.finalizers`), patch on
//! `<kind>/status` when status is written (`Context::patch_status` merge-patches it), create/patch/delete
//! on the declared `writes:` kinds, list/watch on the kinds that trigger it (`owns:`, `watches:`, watched
//! where the controller watches, cluster-scoped ones cluster-wide) (children written with server-side apply, which needs `create` to
//! create, and removed with delete), events create/patch where objects are watched (kube's recorder
//! creates an Event and patches its series on repeats), and get/create/update on the leader Lease in
//! the operator's namespace. Cluster-wide watches and cluster-scoped kinds go to the ClusterRole, the
//! rest to a Role per namespace, minus what the ClusterRole already grants.

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

const READ: [&str; 2] = ["list", "watch"];
const WRITE: [&str; 3] = ["create", "patch", "delete"];

/// What one controller declaration needs (`namespaces`: where it watches; `None` = cluster-wide).
pub(crate) struct Needs<'a> {
    pub group: &'a str,
    pub plural: &'a str,
    pub namespaces: Vec<Option<String>>,
    pub finalizer: bool,
    pub status: bool,
    pub writes: &'a [(String, String)],
    /// Kinds watched to trigger the controller (`owns:`, `watches:`): (group, plural, namespaced).
    pub related: Vec<(String, String, bool)>,
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
            out.push(grant(ns, needs.group, needs.plural, &["patch"]));
        }
        if needs.status {
            out.push(grant(
                ns,
                needs.group,
                &format!("{}/status", needs.plural),
                &["patch"],
            ));
        }
        for (group, resource) in needs.writes {
            out.push(grant(ns, group, resource, &WRITE));
        }
        for (group, resource, namespaced) in &needs.related {
            let place = if *namespaced { ns } else { &None };
            out.push(grant(place, group, resource, &READ));
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

/// Merges grants into rules: one rule per (group, verbs), resources sorted. A namespace's verbs the
/// ClusterRole already grants on the same resource are left out of its Role (they would never be used).
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
    let cluster = by_place.get(&None).cloned().unwrap_or_default();
    for (place, resources) in by_place.iter_mut() {
        if place.is_none() {
            continue;
        }
        for (key, verbs) in resources.iter_mut() {
            if let Some(everywhere) = cluster.get(key) {
                verbs.retain(|v| !everywhere.contains(v));
            }
        }
        resources.retain(|_, verbs| !verbs.is_empty());
    }
    by_place.retain(|_, resources| !resources.is_empty());
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
            related: vec![
                (String::new(), "secrets".into(), true),
                ("".into(), "namespaces".into(), false),
            ],
        };
        let audit = Needs {
            group: "",
            plural: "configmaps",
            namespaces: vec![None],
            finalizer: false,
            status: false,
            writes: &[],
            related: Vec::new(),
        };
        let mut all = grants(&lamp);
        all.extend(grants(&audit));
        all.push(lease("lamps-system"));
        let access = merge(all);
        assert_eq!(
            access.cluster,
            vec![
                rule("", &["configmaps", "namespaces"], &["list", "watch"]),
                rule("events.k8s.io", &["events"], &["create", "patch"]),
            ]
        );
        assert_eq!(
            access.namespaced["lamps-system"],
            vec![
                rule("", &["configmaps"], &["create", "delete", "patch"]),
                rule("", &["secrets"], &["list", "watch"]),
                rule(
                    "coordination.k8s.io",
                    &["leases"],
                    &["create", "get", "update"]
                ),
                rule("example.com", &["lamps"], &["list", "patch", "watch"]),
                rule("example.com", &["lamps/status"], &["patch"]),
            ],
            "the events rule of the ClusterRole covers lamps-system: the Role does not repeat it"
        );
    }
}
