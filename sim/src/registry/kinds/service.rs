//! Service (v1): cluster IP allocation, IP family and traffic policies, node ports; port rules; the
//! cluster IP an update may not change; its columns.

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, set_default};
use crate::registry::rules::service;
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, first, labels_text, or_none, s};
use crate::registry::table::{AGE, Col, Printer};
use crate::registry::validate::NameRule;
use crate::status::Cause;

pub struct Service;

impl Strategy for Service {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn default(&self, root: &mut Map<String, Value>, cluster_ip: &mut dyn FnMut() -> String) {
        // `ServiceStatus.loadBalancer` is a struct nested by value: always there, if empty.
        if let Some(status) = obj(child(root, "status")) {
            status.entry("loadBalancer").or_insert_with(|| json!({}));
        }
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        set_default(spec, "type", json!("ClusterIP"));
        set_default(spec, "sessionAffinity", json!("None"));
        let external_name = spec.get("type") == Some(&json!("ExternalName"));
        if !external_name {
            set_default(spec, "internalTrafficPolicy", json!("Cluster"));
            if !spec.contains_key("clusterIP") {
                let ip = cluster_ip();
                spec.insert("clusterIP".into(), json!(ip));
            }
            let ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
            set_default(spec, "clusterIPs", json!([ip]));
            set_default(spec, "ipFamilies", json!(["IPv4"]));
            set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
        }
        if spec.get("type").and_then(Value::as_str) == Some("LoadBalancer") {
            set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
        }
        let node_ports = matches!(
            spec.get("type").and_then(Value::as_str),
            Some("NodePort" | "LoadBalancer")
        );
        let seed = spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if node_ports {
            set_default(spec, "externalTrafficPolicy", json!("Cluster"));
        }
        if let Some(Value::Array(ports)) = spec.get_mut("ports") {
            for (i, p) in ports.iter_mut().filter_map(obj).enumerate() {
                set_default(p, "protocol", json!("TCP"));
                if let Some(port) = p.get("port").cloned() {
                    set_default(p, "targetPort", port);
                }
                if node_ports && !p.contains_key("nodePort") {
                    let h = seed
                        .bytes()
                        .chain([i as u8])
                        .fold(2_166_136_261u32, |h, b| {
                            (h ^ b as u32).wrapping_mul(16_777_619)
                        });
                    p.insert("nodePort".into(), json!(30_000 + h % 2_768));
                }
            }
        }
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        service(object, out);
    }

    fn allocated(&self) -> &'static [&'static str] {
        &[
            "/spec/clusterIP",
            "/spec/clusterIPs",
            "/spec/ipFamilies",
            "/spec/ipFamilyPolicy",
        ]
    }

    fn validate_update(&self, old: &Value, new: &Value, out: &mut Vec<Cause>) {
        let old_ip = old
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !old_ip.is_empty()
            && old.pointer("/spec/clusterIP") != new.pointer("/spec/clusterIP")
            && new.pointer("/spec/type") != Some(&Value::from("ExternalName"))
        {
            // `ValidateServiceUpdate` names the whole new list, printed as Go's `%#v` does.
            let ip = new
                .pointer("/spec/clusterIP")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push(crate::status::Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: []string{{{ip:?}}}: may not change once set"),
                field: "spec.clusterIPs[0]".into(),
            });
        }
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Type", "string", 0),
                Col("Cluster-IP", "string", 0),
                Col("External-IP", "string", 0),
                Col("Port(s)", "string", 0),
                AGE,
                Col("Selector", "string", 1),
            ],
            cells,
        })
    }
}

fn cells(o: &Value) -> Vec<Value> {
    let ports: Vec<String> = o
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let node = p
                .get("nodePort")
                .map(|n| format!(":{n}"))
                .unwrap_or_default();
            format!("{}{node}/{}", s(p, "/port"), s(p, "/protocol"))
        })
        .collect();
    let mut external: Vec<String> = o
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|i| first(i, &["/ip", "/hostname"]))
        .chain(
            o.pointer("/spec/externalIPs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string),
        )
        .collect();
    external.retain(|e| !e.is_empty());
    let ty = s(o, "/spec/type");
    let external = match (external.is_empty(), ty.as_str()) {
        (true, "LoadBalancer") => "<pending>".to_string(),
        (true, "ExternalName") => s(o, "/spec/externalName"),
        _ => or_none(external.join(",")),
    };
    vec![
        json!(ty),
        json!(or_none(s(o, "/spec/clusterIP"))),
        json!(external),
        json!(or_none(ports.join(","))),
        json!(age(o)),
        json!(or_none(labels_text(o.pointer("/spec/selector")))),
    ]
}
