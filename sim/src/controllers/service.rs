//! The endpoints controllers: for every Service with a selector, an Endpoints object (same name) and
//! one EndpointSlice (`<service>-<5 chars>`, labelled `kubernetes.io/service-name`) listing the
//! selected pods that have an IP, ready ones as ready addresses.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster::Cluster;
use crate::registry::selectors::LabelSelector;
use crate::util::{self, s};

const SLICE_MANAGER: &str = "endpointslice-controller.k8s.io";

/// The store keys whose changes call for a turn of this controller (the kinds it lists).
pub(super) const WATCHES: &[&str] = &[
    "/services",
    "/pods",
    "/endpoints",
    "discovery.k8s.io/endpointslices",
];

/// One turn over every Service.
pub fn reconcile(cluster: &Cluster) {
    let (Ok(services), Ok(pods), Ok(endpoints), Ok(slices)) = (
        cluster.rt("", "v1", "services"),
        cluster.rt("", "v1", "pods"),
        cluster.rt("", "v1", "endpoints"),
        cluster.rt("discovery.k8s.io", "v1", "endpointslices"),
    ) else {
        return;
    };
    let all_pods = cluster.list(&pods);
    let all_slices = cluster.list(&slices);
    // Indexed once per turn, not searched once per Service: a turn over S Services and P pods matched
    // every Service's selector against every pod through JSON pointers (quadratic, and most of the
    // local cluster's idle CPU with a few hundred of each).
    let serving = serving_pods(&all_pods);
    let slices_of = slices_by_service(&all_slices);
    // Endpoints this controller wrote whose Service is gone.
    for ep in cluster.list(&endpoints).iter() {
        let ns = s(ep, "/metadata/namespace");
        let name = s(ep, "/metadata/name");
        if !matches!(cluster.get(&services, ns, name), Ok(None)) {
            continue;
        }
        // The shared lists keep no managedFields: whether this controller wrote it, from the store.
        let ours = cluster
            .get(&endpoints, ns, name)
            .ok()
            .flatten()
            .is_some_and(|ep| {
                ep.pointer("/metadata/managedFields")
                    .and_then(Value::as_array)
                    .is_some_and(|m| m.iter().any(|e| e["manager"] == "endpoint-controller"))
            });
        if ours {
            let _ = cluster.remove(&endpoints, ns, name);
        }
    }
    for svc in cluster.list(&services).iter() {
        let Some(sel) = svc.pointer("/spec/selector").and_then(Value::as_object) else {
            continue;
        };
        if sel.is_empty() || util::terminating(svc) {
            continue;
        }
        let ns = s(svc, "/metadata/namespace");
        let name = s(svc, "/metadata/name");
        let text: Vec<String> = sel
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
            .collect();
        let Ok(selector) = LabelSelector::parse(&text.join(",")) else {
            continue;
        };
        let mut chosen: Vec<&Value> = serving
            .get(ns)
            .into_iter()
            .flatten()
            .filter(|(labels, _)| selector.matches_labels(*labels))
            .map(|(_, p)| *p)
            .collect();
        chosen.sort_by_key(|p| s(p, "/status/podIP").to_string());
        let ports: Vec<Value> = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let resolve = |port: &Value, pod: Option<&Value>| -> i64 {
            match port.get("targetPort") {
                Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
                Some(Value::String(named)) => pod
                    .and_then(|p| p.pointer("/spec/containers").and_then(Value::as_array))
                    .into_iter()
                    .flatten()
                    .flat_map(|c| {
                        c.get("ports")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                    })
                    .find(|cp| cp.get("name").and_then(Value::as_str) == Some(named))
                    .and_then(|cp| cp.get("containerPort").and_then(Value::as_i64))
                    .unwrap_or(0),
                _ => util::i(port, "/port", 0),
            }
        };
        let first = chosen.first().copied();
        let ep_ports: Vec<Value> = ports
            .iter()
            .map(|p| {
                let mut e = json!({"port": resolve(p, first), "protocol": s(p, "/protocol")});
                if !s(p, "/name").is_empty() {
                    e["name"] = json!(s(p, "/name"));
                }
                e
            })
            .collect();
        let target = |p: &Value| json!({"kind": "Pod", "namespace": ns, "name": s(p, "/metadata/name"), "uid": util::uid(p)});
        let address = |p: &Value| json!({"ip": s(p, "/status/podIP"), "nodeName": s(p, "/spec/nodeName"), "targetRef": target(p)});
        let ready_addrs: Vec<Value> = chosen
            .iter()
            .filter(|p| super::replicaset::ready(p))
            .map(|p| address(p))
            .collect();
        let not_ready: Vec<Value> = chosen
            .iter()
            .filter(|p| !super::replicaset::ready(p))
            .map(|p| address(p))
            .collect();
        let mut subset = json!({"ports": ep_ports});
        if !ready_addrs.is_empty() {
            subset["addresses"] = json!(ready_addrs);
        }
        if !not_ready.is_empty() {
            subset["notReadyAddresses"] = json!(not_ready);
        }
        let subsets = if chosen.is_empty() {
            json!([])
        } else {
            json!([subset])
        };
        let labels = svc
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or(json!({}));
        match cluster.get(&endpoints, ns, name) {
            Ok(None) => {
                let mut ep = json!({"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": name, "namespace": ns, "labels": labels}});
                if !chosen.is_empty() {
                    ep["subsets"] = subsets;
                }
                let _ = cluster.create(&endpoints, ns, ep, "endpoint-controller");
            }
            Ok(Some(ep)) => {
                let have = ep.get("subsets").cloned().unwrap_or(json!([]));
                if have != subsets {
                    let _ = cluster.update(&endpoints, ns, name, "", "endpoint-controller", |x| {
                        if chosen.is_empty() {
                            x.as_object_mut().map(|m| m.remove("subsets"));
                        } else {
                            x["subsets"] = subsets;
                        }
                        true
                    });
                }
            }
            Err(_) => {}
        }
        let slice_endpoints: Vec<Value> = chosen
            .iter()
            .map(|p| {
                let ok = super::replicaset::ready(p);
                json!({"addresses": [s(p, "/status/podIP")],
                       "conditions": {"ready": ok, "serving": ok, "terminating": false},
                       "nodeName": s(p, "/spec/nodeName"), "targetRef": target(p)})
            })
            .collect();
        let slice_ports: Vec<Value> = ports
            .iter()
            .map(|p| json!({"name": s(p, "/name"), "port": resolve(p, first), "protocol": s(p, "/protocol")}))
            .collect();
        let existing = slices_of
            .get(&(ns, name))
            .into_iter()
            .flatten()
            .find(|x| util::controller_uid(x) == Some(util::uid(svc)))
            .copied();
        match existing {
            None => {
                let mut labels = labels.clone();
                labels["kubernetes.io/service-name"] = json!(name);
                labels["endpointslice.kubernetes.io/managed-by"] = json!(SLICE_MANAGER);
                let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": format!("{name}-{}", &crate::registry::object::new_uid()[..5]),
                                 "namespace": ns, "labels": labels,
                                 "ownerReferences": [util::owner_ref(svc)]},
                    "addressType": "IPv4", "endpoints": slice_endpoints, "ports": slice_ports});
                let _ = cluster.create(&slices, ns, slice, "endpointslice-controller");
            }
            Some(x) => {
                if x.get("endpoints") != Some(&json!(slice_endpoints))
                    || x.get("ports") != Some(&json!(slice_ports))
                {
                    let _ = cluster.update(
                        &slices,
                        ns,
                        s(x, "/metadata/name"),
                        "",
                        "endpointslice-controller",
                        |y| {
                            y["endpoints"] = json!(slice_endpoints);
                            y["ports"] = json!(slice_ports);
                            true
                        },
                    );
                }
            }
        }
    }
}

/// A pod and its labels (`None`: it has none).
type Labelled<'a> = (Option<&'a Map<String, Value>>, &'a Value);

/// The pods that can serve, by namespace, each with its labels: not terminating, with an IP, not ended.
fn serving_pods(pods: &[Arc<Value>]) -> HashMap<&str, Vec<Labelled<'_>>> {
    let mut by_namespace: HashMap<&str, Vec<_>> = HashMap::new();
    for p in pods {
        if util::terminating(p)
            || s(p, "/status/podIP").is_empty()
            || matches!(s(p, "/status/phase"), "Succeeded" | "Failed")
        {
            continue;
        }
        let labels = p["metadata"].get("labels").and_then(Value::as_object);
        by_namespace
            .entry(s(p, "/metadata/namespace"))
            .or_default()
            .push((labels, &**p));
    }
    by_namespace
}

/// EndpointSlices by namespace and the Service their `kubernetes.io/service-name` label names.
fn slices_by_service(slices: &[Arc<Value>]) -> HashMap<(&str, &str), Vec<&Value>> {
    let mut by_service: HashMap<(&str, &str), Vec<&Value>> = HashMap::new();
    for x in slices {
        let Some(service) = x["metadata"]["labels"]["kubernetes.io/service-name"].as_str() else {
            continue;
        };
        by_service
            .entry((s(x, "/metadata/namespace"), service))
            .or_default()
            .push(&**x);
    }
    by_service
}
