//! API discovery: the legacy documents (`/api`, `/api/v1`, `/apis`, `/apis/G`, `/apis/G/V`) and the
//! aggregated `apidiscovery.k8s.io/v2` lists.

use serde_json::{Value, json};

use crate::apiserver::discovery_data;
use crate::registry::ResourceType;

/// The Content-Type of aggregated discovery responses.
pub const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/// The older beta form, for clients that ask only for it.
pub const AGGREGATED_V2BETA1: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// Which aggregated form the Accept header asks for first, if any.
pub fn aggregated_wanted(accept: &str) -> Option<&'static str> {
    for part in accept.split(',') {
        let p: String = part.chars().filter(|c| !c.is_whitespace()).collect();
        if p.contains("as=APIGroupDiscoveryList") {
            if p.contains("v=v2beta1") {
                return Some(AGGREGATED_V2BETA1);
            }
            if p.contains("v=v2") {
                return Some(AGGREGATED_V2);
            }
        } else if p.starts_with("application/json") || p.starts_with("*/*") {
            return None;
        }
    }
    None
}

/// The groups (in order of first appearance) and their versions.
pub fn groups(types: &[ResourceType]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in types {
        match out.iter_mut().find(|(g, _)| *g == t.group) {
            Some((_, versions)) => {
                if !versions.contains(&t.version) {
                    versions.push(t.version.clone());
                }
            }
            None => out.push((t.group.clone(), vec![t.version.clone()])),
        }
    }
    out
}

/// `/api`.
pub fn api_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}],
    })
}

/// The served groups in kube-apiserver's order: its own groups first (each with the versions the sim
/// serves and the preferred one), then those of custom resources.
fn served_groups(types: &[ResourceType]) -> Vec<(String, Vec<String>, String)> {
    let mut out = discovery_data::groups(types);
    for (g, versions) in groups(types) {
        if g.is_empty() || discovery_data::is_builtin_group(&g) {
            continue;
        }
        let preferred = versions.first().cloned().unwrap_or_default();
        out.push((g, versions, preferred));
    }
    out
}

fn served_group_doc(name: &str, versions: &[String], preferred: &str) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs,
        "preferredVersion": {"groupVersion": format!("{name}/{preferred}"), "version": preferred}})
}

/// `/apis`.
pub fn api_group_list(types: &[ResourceType]) -> Value {
    let groups: Vec<Value> = served_groups(types)
        .iter()
        .map(|(g, v, p)| served_group_doc(g, v, p))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/G`, if the group is served.
pub fn api_group(types: &[ResourceType], group: &str) -> Option<Value> {
    let (name, versions, preferred) = served_groups(types)
        .into_iter()
        .find(|(g, _, _)| g == group)?;
    let mut doc = served_group_doc(&name, &versions, &preferred);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/api/v1` or `/apis/G/V`, if served.
pub fn api_resource_list(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    if discovery_data::is_builtin_group(group)
        && let Some(doc) = discovery_data::resource_list(types, group, version)
    {
        return Some(doc);
    }
    let gv: Vec<&ResourceType> = types
        .iter()
        .filter(|t| t.group == group && t.version == version)
        .collect();
    if gv.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for t in gv {
        let mut r = json!({
            "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced,
            "kind": t.kind, "verbs": t.verbs(),
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        if !t.categories.is_empty() {
            r["categories"] = json!(t.categories);
        }
        if t.crd {
            r["storageVersionHash"] = json!(discovery_data::storage_version_hash(
                &t.group, &t.version, &t.kind
            ));
        }
        resources.push(r);
        if t.status_subresource {
            resources.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
                "kind": t.kind, "verbs": ["get", "patch", "update"]}));
        }
        if t.scale.is_some() {
            resources.push(json!({"name": format!("{}/scale", t.plural), "singularName": "", "namespaced": t.namespaced,
                "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
        }
    }
    let gv_name = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv_name, "resources": resources}),
    )
}

fn aggregated_resource(t: &ResourceType) -> Value {
    let mut r = json!({
        "resource": t.plural,
        "responseKind": {"group": t.group, "version": t.version, "kind": t.kind},
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": t.verbs(),
    });
    if !t.short_names.is_empty() {
        r["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        r["categories"] = json!(t.categories);
    }
    let mut subs = Vec::new();
    if t.status_subresource {
        subs.push(json!({"subresource": "status", "responseKind": {"group": t.group, "version": t.version, "kind": t.kind},
            "verbs": ["get", "patch", "update"]}));
    }
    if t.scale.is_some() {
        subs.push(json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"]}));
    }
    if !subs.is_empty() {
        r["subresources"] = Value::Array(subs);
    }
    r
}

/// The aggregated list for `/api` (`legacy` = true, the core group) or `/apis` (every named group).
pub fn aggregated(types: &[ResourceType], legacy: bool, content_type: &str) -> Value {
    let api_version = if content_type == AGGREGATED_V2BETA1 {
        "apidiscovery.k8s.io/v2beta1"
    } else {
        "apidiscovery.k8s.io/v2"
    };
    let mut items: Vec<Value> = Vec::new();
    if legacy {
        items.extend(discovery_data::aggregated_item(types, ""));
    } else {
        for (g, _, _) in discovery_data::groups(types) {
            items.extend(discovery_data::aggregated_item(types, &g));
        }
    }
    let custom = groups(types)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == legacy && !discovery_data::is_builtin_group(g));
    items.extend(custom.map(|(g, versions)| {
        let vs: Vec<Value> = versions
            .iter()
            .map(|v| {
                let resources: Vec<Value> = types
                    .iter()
                    .filter(|t| t.group == g && &t.version == v)
                    .map(aggregated_resource)
                    .collect();
                json!({"version": v, "resources": resources, "freshness": "Current"})
            })
            .collect();
        json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": vs})
    }));
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn negotiates_the_aggregated_form() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(aggregated_wanted(kubectl), Some(AGGREGATED_V2));
        assert_eq!(aggregated_wanted("application/json, */*"), None);
    }

    #[test]
    fn lists_subresources_and_short_names() {
        let types = Registry::default().all();
        let apps = api_resource_list(&types, "apps", "v1").expect("apps/v1");
        let names: Vec<&str> = apps["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"deployments/scale"));
        let agg = aggregated(&types, false, AGGREGATED_V2);
        let apps = agg["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["metadata"]["name"] == "apps")
            .expect("apps group");
        let deploy = apps["versions"][0]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["resource"] == "deployments")
            .expect("deployments");
        assert_eq!(deploy["responseKind"]["kind"], "Deployment");
        assert_eq!(deploy["shortNames"][0], "deploy");
        assert!(api_group(&types, "nope").is_none());
    }
}
