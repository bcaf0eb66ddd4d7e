//! Pod (v1): pod spec defaults, the initial `Pending` status and QoS class, container rules; its
//! columns; graceful deletion, and a DELETE answers with the deleted object.

pub(crate) mod deletion;
pub(crate) mod status;

use serde_json::{Map, Value, json};

use crate::registry::defaults::{child, obj, pod_spec, set_default};
use crate::registry::rules::containers;
use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{age, first, or_none, s};
use crate::registry::table::{AGE, Col, Printer};
use crate::status::{ApiError, Cause};
use crate::storage::Writer;

pub struct Pod;

impl Strategy for Pod {
    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        let Some(spec) = obj(child(root, "spec")) else {
            return;
        };
        pod_spec(spec);
        set_default(spec, "enableServiceLinks", json!(true));
        set_default(spec, "serviceAccountName", json!("default"));
        set_default(spec, "priority", json!(0));
        set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    }

    fn prepare_create(&self, object: &mut Value) {
        admission_defaults(object);
        status::on_create(object);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        containers(&object["spec"], "spec", out);
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn graceful_delete(
        &self,
        w: &mut Writer<'_>,
        ns: &str,
        name: &str,
        pod: &Value,
        requested: Option<i64>,
    ) -> Result<Option<Value>, ApiError> {
        deletion::graceful(w, ns, name, pod, requested)
    }

    fn printer(&self) -> Option<Printer> {
        Some(Printer {
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
            cells,
        })
    }
}

/// What kube-apiserver's default admission plugins add to a new pod: `ServiceAccount` mounts the
/// `kube-api-access-XXXXX` projected volume (token, the cluster CA, the namespace) into every container
/// unless automounting is off, and `serviceAccount` mirrors `serviceAccountName`;
/// `DefaultTolerationSeconds` tolerates `not-ready` and `unreachable` for 300 s.
fn admission_defaults(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(sa) = spec.get("serviceAccountName").cloned() {
        spec.entry("serviceAccount").or_insert(sa);
    }
    const MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    let automount = spec.get("automountServiceAccountToken") != Some(&json!(false));
    let mounted = |c: &Value| {
        c.get("volumeMounts")
            .and_then(Value::as_array)
            .is_some_and(|ms| ms.iter().any(|m| m["mountPath"] == MOUNT))
    };
    if automount {
        let name = format!(
            "kube-api-access-{}",
            crate::registry::object::random::name_suffix()
        );
        let mut added = false;
        for list in ["initContainers", "containers"] {
            if let Some(Value::Array(cs)) = spec.get_mut(list) {
                for c in cs.iter_mut().filter(|c| !mounted(c)) {
                    added = true;
                    let mount = json!({"name": name, "readOnly": true, "mountPath": MOUNT});
                    match c.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                        Some(ms) => ms.push(mount),
                        None => c["volumeMounts"] = json!([mount]),
                    }
                }
            }
        }
        if added {
            let volume = json!({"name": name, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace",
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}});
            match spec.get_mut("volumes").and_then(Value::as_array_mut) {
                Some(vs) => vs.push(volume),
                None => {
                    spec.insert("volumes".into(), json!([volume]));
                }
            }
        }
    }
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if let Some(ts) = tolerations.as_array_mut() {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let tolerated = ts.iter().any(|t| {
                (t["key"] == key || (t.get("key").is_none() && t["operator"] == "Exists"))
                    && (t.get("effect").is_none()
                        || t["effect"] == "NoExecute"
                        || t["effect"] == "")
            });
            if !tolerated {
                ts.push(
                    json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 300}),
                );
            }
        }
    }
}

fn cells(o: &Value) -> Vec<Value> {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn new_pods_get_the_service_account_volume_and_default_tolerations() {
        let mut pod = json!({"spec": {"serviceAccountName": "default",
            "containers": [{"name": "a", "image": "x"}]}});
        super::admission_defaults(&mut pod);
        let spec = &pod["spec"];
        assert_eq!(spec["serviceAccount"], "default");
        let volume = spec["volumes"][0]["name"].as_str().expect("volume");
        assert!(volume.starts_with("kube-api-access-") && volume.len() == 21);
        assert_eq!(spec["containers"][0]["volumeMounts"][0]["name"], volume);
        assert_eq!(spec["tolerations"].as_array().map(Vec::len), Some(2));
        let mut off = json!({"spec": {"automountServiceAccountToken": false,
            "containers": [{"name": "a", "image": "x"}]}});
        super::admission_defaults(&mut off);
        assert!(off["spec"].get("volumes").is_none());
    }
}
