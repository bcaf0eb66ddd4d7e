//! Node (v1): the columns `kubectl get nodes` prints.

use serde_json::{Value, json};

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, or_none, s};
use crate::registry::table::{AGE, Col, Printer};

pub struct Node;

impl Strategy for Node {
    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Status", "string", 0),
                Col("Roles", "string", 0),
                AGE,
                Col("Version", "string", 0),
                Col("Internal-IP", "string", 1),
                Col("External-IP", "string", 1),
                Col("OS-Image", "string", 1),
                Col("Kernel-Version", "string", 1),
                Col("Container-Runtime", "string", 1),
            ],
            cells,
        })
    }
}

fn cells(o: &Value) -> Vec<Value> {
    let mut status: Vec<String> = o
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .map(|c| {
            if c["status"] == "True" {
                "Ready".into()
            } else {
                "NotReady".into()
            }
        })
        .into_iter()
        .collect();
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if o.pointer("/spec/unschedulable") == Some(&json!(true)) {
        status.push("SchedulingDisabled".into());
    }
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) => Some(role.to_string()),
            None if k == "kubernetes.io/role" => v.as_str().map(str::to_string),
            None => None,
        })
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort();
    roles.dedup();
    let address = |ty: &str| {
        o.pointer("/status/addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|a| a["type"] == ty)
            .map(|a| s(a, "/address"))
            .unwrap_or_default()
    };
    let unknown = |v: String| if v.is_empty() { "<unknown>".into() } else { v };
    vec![
        json!(status.join(",")),
        json!(or_none(roles.join(","))),
        json!(age(o)),
        json!(s(o, "/status/nodeInfo/kubeletVersion")),
        json!(or_none(address("InternalIP"))),
        json!(or_none(address("ExternalIP"))),
        json!(unknown(s(o, "/status/nodeInfo/osImage"))),
        json!(unknown(s(o, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(s(o, "/status/nodeInfo/containerRuntimeVersion"))),
    ]
}
