//! Services of included files as the items referring to them see them: an Ingress backend, a check or
//! `access` names one by its name and its ports, as it would a Service the app declares.

use crate::model::{IncludedWorkload, PortRef, Service, ServicePort};
use crate::spanned::{Loc, Spanned};
use serde_json::Value;

/// The Service an included object is (a core/v1 Service with a name), located at the include: its ports
/// (name, port, target port) and, when its selector is exactly the selector of one of `workloads`, that
/// workload, so a check or `access` reaches its pods. Nothing of it is rendered: the include is.
pub fn included_service(
    object: &Value,
    at: Loc,
    workloads: &[IncludedWorkload],
) -> Option<Service> {
    if object["apiVersion"] != "v1" || object["kind"] != "Service" {
        return None;
    }
    let name = object["metadata"]["name"].as_str()?;
    let spanned = |s: &str| Spanned::new(s.to_string(), at);
    let ports = object["spec"]["ports"]
        .as_array()
        .map(|ports| {
            ports
                .iter()
                .filter_map(|p| {
                    Some(ServicePort {
                        name: spanned(p["name"].as_str().unwrap_or_default()),
                        port: Spanned::new(p["port"].as_i64()?, at),
                        target: match &p["targetPort"] {
                            Value::String(s) => Some(PortRef::Name(spanned(s))),
                            Value::Number(n) => {
                                n.as_i64().map(|n| PortRef::Number(Spanned::new(n, at)))
                            }
                            _ => None,
                        },
                        node_port: None,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let selector: Vec<(String, String)> = object["spec"]["selector"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let same = |other: &[(String, String)]| {
        !selector.is_empty()
            && other.len() == selector.len()
            && other.iter().all(|pair| selector.contains(pair))
    };
    let selects = workloads
        .iter()
        .find(|w| same(&w.selector))
        .map(|w| w.workload.name.v.as_str())
        .unwrap_or_default();
    Some(Service {
        name: spanned(name),
        selects: spanned(selects),
        ports,
        ..Service::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Workload, WorkloadKind};
    use serde_json::json;

    fn api_workload() -> IncludedWorkload {
        IncludedWorkload {
            workload: Workload {
                kind: WorkloadKind::Deployment,
                name: Spanned::bare("api".to_string()),
                ..Workload::default()
            },
            selector: vec![("app".into(), "api".into())],
        }
    }

    #[test]
    fn a_service_has_its_ports_and_the_workload_its_selector_is_exactly() {
        let object = json!({
            "apiVersion": "v1", "kind": "Service", "metadata": { "name": "api" },
            "spec": { "selector": { "app": "api" }, "ports": [
                { "name": "http", "port": 80, "targetPort": "web" },
                { "port": 9090, "targetPort": 9091 },
            ] },
        });
        let s = included_service(&object, Loc(3), &[api_workload()]).expect("a Service");
        assert_eq!(s.name.v, "api");
        assert_eq!(s.selects.v, "api");
        let ports: Vec<(&str, i64)> = s
            .ports
            .iter()
            .map(|p| (p.name.v.as_str(), p.port.v))
            .collect();
        assert_eq!(ports, [("http", 80), ("", 9090)]);
        assert!(matches!(&s.ports[0].target, Some(PortRef::Name(n)) if n.v == "web"));
        assert!(matches!(&s.ports[1].target, Some(PortRef::Number(n)) if n.v == 9091));
    }

    #[test]
    fn a_wider_selector_or_another_kind_selects_no_workload() {
        let wider = json!({
            "apiVersion": "v1", "kind": "Service", "metadata": { "name": "api" },
            "spec": { "selector": { "app": "api", "tier": "x" }, "ports": [{ "port": 80 }] },
        });
        let s = included_service(&wider, Loc(1), &[api_workload()]).expect("a Service");
        assert!(s.selects.v.is_empty());
        let config =
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "api" } });
        assert!(included_service(&config, Loc(1), &[]).is_none());
    }
}
