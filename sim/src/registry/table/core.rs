//! Table printers of the core kinds, with the columns kube-apiserver 1.33 prints (priority-1
//! columns are the ones `kubectl get -o wide` adds).

use serde_json::{Value, json};

use super::cells::{age, count, first, labels_text, n, or_none, s, since};
use super::{Col, Printer};

/// The printer of a core (`v1`) kind, or of `events.k8s.io` Events.
pub fn printer(kind: &str) -> Option<Printer> {
    Some(match kind {
        "ConfigMap" => Printer {
            columns: &[Col("Name", "string", 0), Col("Data", "integer", 0), AGE],
            cells: |o| {
                vec![
                    json!(count(o, "data") + count(o, "binaryData")),
                    json!(age(o)),
                ]
            },
        },
        "Secret" => Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Type", "string", 0),
                Col("Data", "integer", 0),
                AGE,
            ],
            cells: |o| vec![json!(s(o, "/type")), json!(count(o, "data")), json!(age(o))],
        },
        "Namespace" => Printer {
            columns: &[Col("Name", "string", 0), Col("Status", "string", 0), AGE],
            cells: |o| vec![json!(or_none(s(o, "/status/phase"))), json!(age(o))],
        },
        "ServiceAccount" => Printer {
            columns: &[Col("Name", "string", 0), Col("Secrets", "integer", 0), AGE],
            cells: |o| {
                let secrets = o
                    .get("secrets")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                vec![json!(secrets), json!(age(o))]
            },
        },
        "Service" => Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Type", "string", 0),
                Col("Cluster-IP", "string", 0),
                Col("External-IP", "string", 0),
                Col("Port(s)", "string", 0),
                AGE,
                Col("Selector", "string", 1),
            ],
            cells: service,
        },
        "Pod" => Printer {
            columns: &[
                Col("Name", "string", 0),
                Col("Ready", "string", 0),
                Col("Status", "string", 0),
                Col("Restarts", "string", 0),
                AGE,
                Col("IP", "string", 1),
                Col("Node", "string", 1),
                Col("Nominated Node", "string", 1),
                Col("Readiness Gates", "string", 1),
            ],
            cells: pod,
        },
        "Node" => Printer {
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
            cells: node,
        },
        "Event" => Printer {
            columns: &[
                Col("Last Seen", "string", 0),
                Col("Type", "string", 0),
                Col("Reason", "string", 0),
                Col("Object", "string", 0),
                Col("Subobject", "string", 1),
                Col("Source", "string", 1),
                Col("Message", "string", 0),
                Col("First Seen", "string", 1),
                Col("Count", "integer", 1),
                Col("Name", "string", 1),
            ],
            cells: event,
        },
        _ => return None,
    })
}

const AGE: Col = Col("Age", "string", 0);

fn service(o: &Value) -> Vec<Value> {
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

fn pod(o: &Value) -> Vec<Value> {
    let total = o
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let statuses = o
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ready = statuses
        .iter()
        .filter(|c| c["ready"] == json!(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let mut phase = s(o, "/status/phase");
    if phase.is_empty() {
        phase = "Pending".into();
    }
    // As kubectl's printer: a container's waiting or terminated reason wins over the phase.
    for c in statuses.iter().rev() {
        let reason = c
            .pointer("/state/waiting/reason")
            .or_else(|| c.pointer("/state/terminated/reason"))
            .and_then(Value::as_str);
        if let Some(r) = reason.filter(|r| !r.is_empty()) {
            phase = r.to_string();
            break;
        }
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        phase = "Terminating".into();
    }
    let gates: Vec<&str> = o
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| g["conditionType"].as_str())
        .collect();
    let conditions = o
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let met = gates
            .iter()
            .filter(|g| {
                conditions
                    .iter()
                    .find(|c| c["type"] == **g)
                    .is_some_and(|c| c["status"] == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(phase),
        json!(restarts.to_string()),
        json!(age(o)),
        json!(or_none(first(o, &["/status/podIPs/0/ip", "/status/podIP"]))),
        json!(or_none(s(o, "/spec/nodeName"))),
        json!(or_none(s(o, "/status/nominatedNodeName"))),
        json!(readiness_gates),
    ]
}

fn node(o: &Value) -> Vec<Value> {
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

/// An Event row; core/v1 field names first, then the events.k8s.io/v1 ones.
fn event(o: &Value) -> Vec<Value> {
    let ts = |ptrs: &[&str]| {
        let v = first(o, ptrs);
        (!v.is_empty()).then(|| json!(v))
    };
    let first_seen =
        ts(&["/firstTimestamp", "/deprecatedFirstTimestamp"]).or_else(|| ts(&["/eventTime"]));
    let first_seen = since(first_seen.as_ref());
    let mut last_seen = match ts(&["/lastTimestamp", "/deprecatedLastTimestamp"]) {
        Some(t) => since(Some(&t)),
        None => first_seen.clone(),
    };
    let mut count = o
        .get("count")
        .or_else(|| o.get("deprecatedCount"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(series) = o.get("series").filter(|v| v.is_object()) {
        last_seen = since(series.get("lastObservedTime"));
        count = n(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let regarding = o
        .get("involvedObject")
        .or_else(|| o.get("regarding"))
        .cloned()
        .unwrap_or(Value::Null);
    let kind = s(&regarding, "/kind").to_lowercase();
    let name = s(&regarding, "/name");
    let target = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    let component = first(
        o,
        &[
            "/source/component",
            "/reportingController",
            "/deprecatedSource/component",
        ],
    );
    let instance = first(
        o,
        &[
            "/source/host",
            "/reportingInstance",
            "/deprecatedSource/host",
        ],
    );
    let source = match (component.is_empty(), instance.is_empty()) {
        (true, _) => String::new(),
        (false, true) => component,
        (false, false) => format!("{component}, {instance}"),
    };
    vec![
        json!(last_seen),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(target),
        json!(s(&regarding, "/fieldPath")),
        json!(source),
        json!(first(o, &["/message", "/note"]).trim()),
        json!(first_seen),
        json!(count),
        json!(s(o, "/metadata/name")),
    ]
}
