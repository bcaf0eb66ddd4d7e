//! kube-apiserver 1.33's own discovery documents for the built-in group-versions
//! (`schema/k8s-1.33-discovery.json`, see `schema/ORIGIN.md`), cut down to what the sim serves: the
//! resources of its built-in types and the subresources it answers.

use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::ResourceType;

static RAW: &str = include_str!("../../schema/k8s-1.33-discovery.json");
static DATA: OnceLock<Value> = OnceLock::new();

/// Subresources the sim answers besides `status` and `scale` (which follow the type).
const SERVED_SUBRESOURCES: &[&str] = &[
    "pods/attach",
    "pods/binding",
    "pods/ephemeralcontainers",
    "pods/resize",
    "nodes/proxy",
    "certificatesigningrequests/approval",
    "pods/eviction",
    "pods/exec",
    "pods/log",
    "pods/portforward",
    "pods/proxy",
    "services/proxy",
    "namespaces/finalize",
    "serviceaccounts/token",
];

fn data() -> &'static Value {
    DATA.get_or_init(|| serde_json::from_str(RAW).unwrap_or(Value::Null))
}

/// `v1` for the core group, else `group/version`.
fn gv(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The built-in type serving `resource` (a plural) at `group/version`.
fn builtin<'a>(
    types: &'a [ResourceType],
    group: &str,
    version: &str,
    resource: &str,
) -> Option<&'a ResourceType> {
    types
        .iter()
        .find(|t| !t.crd && t.group == group && t.version == version && t.plural == resource)
}

/// Whether the sim serves `name` (`pods`, `pods/exec`) at `group/version`.
fn served(types: &[ResourceType], group: &str, version: &str, name: &str) -> bool {
    let (base, sub) = match name.split_once('/') {
        Some((b, s)) => (b, Some(s)),
        None => (name, None),
    };
    let Some(t) = builtin(types, group, version, base) else {
        return false;
    };
    match sub {
        None => true,
        Some("status") => t.status_subresource,
        Some("scale") => t.scale.is_some(),
        Some(_) => SERVED_SUBRESOURCES.contains(&name),
    }
}

/// The group-versions of the built-in groups in kube-apiserver's order (`/apis`), each with the
/// versions the sim serves and the preferred one; the core group is not among them.
pub fn groups(types: &[ResourceType]) -> Vec<(String, Vec<String>, String)> {
    let mut out = Vec::new();
    for g in data()["groups"].as_array().into_iter().flatten() {
        let name = g["name"].as_str().unwrap_or_default();
        let versions: Vec<String> = g["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|v| {
                types
                    .iter()
                    .any(|t| !t.crd && t.group == name && t.version == *v)
            })
            .map(String::from)
            .collect();
        let Some(first) = versions.first().cloned() else {
            continue;
        };
        let preferred = g["preferredVersion"]
            .as_str()
            .filter(|p| versions.iter().any(|v| v == p))
            .map_or(first, String::from);
        out.push((name.to_string(), versions, preferred));
    }
    out
}

/// Whether `group` is one of kube-apiserver's own.
pub fn is_builtin_group(group: &str) -> bool {
    group.is_empty()
        || data()["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|g| g["name"] == group)
}

/// kube-apiserver's `APIResourceList` of `group/version`, with what the sim serves.
pub fn resource_list(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    let mut doc = data()["lists"].get(gv(group, version))?.clone();
    let resources: Vec<Value> = doc["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            served(
                types,
                group,
                version,
                r["name"].as_str().unwrap_or_default(),
            )
        })
        .cloned()
        .collect();
    if resources.is_empty() {
        return None;
    }
    doc["resources"] = Value::Array(resources);
    Some(doc)
}

/// kube-apiserver's aggregated discovery item of `group` (`""` for the core group), with what the
/// sim serves.
pub fn aggregated_item(types: &[ResourceType], group: &str) -> Option<Value> {
    let mut item = data()["aggregated"].get(group)?.clone();
    let mut versions = Vec::new();
    for v in item["versions"].as_array().into_iter().flatten() {
        let version = v["version"].as_str().unwrap_or_default();
        let mut v = v.clone();
        let mut resources = Vec::new();
        for r in v["resources"].as_array().into_iter().flatten() {
            let name = r["resource"].as_str().unwrap_or_default();
            if !served(types, group, version, name) {
                continue;
            }
            let mut r = r.clone();
            if let Some(subs) = r.get("subresources").and_then(Value::as_array) {
                let kept: Vec<Value> = subs
                    .iter()
                    .filter(|s| {
                        let sub = s["subresource"].as_str().unwrap_or_default();
                        served(types, group, version, &format!("{name}/{sub}"))
                    })
                    .cloned()
                    .collect();
                if kept.is_empty() {
                    if let Some(m) = r.as_object_mut() {
                        m.remove("subresources");
                    }
                } else {
                    r["subresources"] = Value::Array(kept);
                }
            }
            resources.push(r);
        }
        if !resources.is_empty() {
            v["resources"] = Value::Array(resources);
            versions.push(v);
        }
    }
    if versions.is_empty() {
        return None;
    }
    item["versions"] = Value::Array(versions);
    Some(item)
}

/// `storageVersionHash` of a custom resource (`discovery.StorageVersionHash`): the first eight bytes
/// of the SHA-256 of `group/version/Kind`, in base64.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn storage_version_hashes_are_kube_apiservers() {
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }

    #[test]
    fn lists_keep_only_what_the_sim_serves() {
        let types = Registry::default().all();
        let core = resource_list(&types, "", "v1").expect("v1");
        let names: Vec<&str> = core["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"pods/exec") && names.contains(&"configmaps"));
        assert!(names.contains(&"pods/resize") && !names.contains(&"bogus"));
        let apps = aggregated_item(&types, "apps").expect("apps");
        assert_eq!(apps["versions"][0]["version"], "v1");
    }
}
