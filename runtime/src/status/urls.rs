//! The URLs that reach the app: declared forwards (served while `access` runs), Ingress hosts (https when
//! the Ingress has TLS), LoadBalancer addresses and NodePorts from the live Services.

use piceli_core::model::{App, ServiceType};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One way to reach the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Url {
    /// `forward`, `ingress`, `load-balancer` or `node-port`.
    pub kind: &'static str,
    /// The Service or Ingress it belongs to.
    pub name: String,
    /// The URL (`None` when the address is not known yet, e.g. a LoadBalancer still pending).
    pub url: Option<String>,
    /// A note for people (how the URL is served, why it is missing).
    pub note: Option<String>,
}

fn scheme(port: i64) -> &'static str {
    if port == 443 { "https" } else { "http" }
}

/// The addresses of a `status.loadBalancer.ingress` list (IP or hostname).
fn lb_addresses(object: &Value) -> Vec<String> {
    object
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("ip").or_else(|| i.get("hostname")))
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Every URL, from the model and the live Services and Ingresses (by name; absent ones are skipped).
/// `node` is a node address for NodePorts, when one is known.
pub fn urls(
    app: &App,
    services: &BTreeMap<String, Value>,
    ingresses: &BTreeMap<String, Value>,
    node: Option<&str>,
) -> Vec<Url> {
    let mut out = Vec::new();
    for s in &app.services {
        if let Some(a) = &s.access {
            out.push(Url {
                kind: "forward",
                name: s.name.v.clone(),
                url: Some(format!("http://127.0.0.1:{}", a.local_port.v)),
                note: Some("served while `access` runs".into()),
            });
        }
    }
    for i in &app.ingresses {
        // `tls: NAME` covers every host; `tls: { SECRET: [hosts] }` the hosts it lists.
        let tls_for = |host: &str| {
            i.tls_secret.is_some() || i.tls.iter().any(|t| t.hosts.iter().any(|h| h.v == host))
        };
        let hosts: Vec<String> = match &i.host {
            Some(h) => vec![h.v.clone()],
            None => ingresses
                .get(&i.name.v)
                .map(lb_addresses)
                .unwrap_or_default(),
        };
        if hosts.is_empty() {
            out.push(Url {
                kind: "ingress",
                name: i.name.v.clone(),
                url: None,
                note: Some("no host declared and no address assigned yet".into()),
            });
        }
        for h in hosts {
            let scheme = if tls_for(&h) { "https" } else { "http" };
            for p in &i.paths {
                out.push(Url {
                    kind: "ingress",
                    name: i.name.v.clone(),
                    url: Some(format!("{scheme}://{h}{}", p.path.v)),
                    note: None,
                });
            }
        }
    }
    for s in &app.services {
        if !matches!(
            s.service_type,
            ServiceType::LoadBalancer | ServiceType::NodePort
        ) {
            continue;
        }
        let Some(live) = services.get(&s.name.v) else {
            continue;
        };
        let ports: Vec<&Value> = live
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        if s.service_type == ServiceType::LoadBalancer {
            let addresses = lb_addresses(live);
            if addresses.is_empty() {
                out.push(Url {
                    kind: "load-balancer",
                    name: s.name.v.clone(),
                    url: None,
                    note: Some("the load balancer has no address yet".into()),
                });
            }
            for a in &addresses {
                for p in &ports {
                    let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                    out.push(Url {
                        kind: "load-balancer",
                        name: s.name.v.clone(),
                        url: Some(format!("{}://{a}:{port}", scheme(port))),
                        note: None,
                    });
                }
            }
        }
        for p in &ports {
            let Some(np) = p.get("nodePort").and_then(Value::as_i64) else {
                continue;
            };
            out.push(Url {
                kind: "node-port",
                name: s.name.v.clone(),
                url: node.map(|n| format!("http://{n}:{np}")),
                note: Some(format!("port {np} on every node")),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::model::{Access, Ingress, IngressPath, Service};
    use piceli_core::spanned::Spanned;
    use serde_json::json;

    fn app() -> App {
        let mut app = App::default();
        app.services.push(Service {
            name: Spanned::bare("web".into()),
            access: Some(Access {
                local_port: Spanned::bare(18080),
                ..Access::default()
            }),
            ..Service::default()
        });
        app.services.push(Service {
            name: Spanned::bare("edge".into()),
            service_type: ServiceType::LoadBalancer,
            ..Service::default()
        });
        app.ingresses.push(Ingress {
            name: Spanned::bare("site".into()),
            host: Some(Spanned::bare("shop.example.com".into())),
            tls_secret: Some(Spanned::bare("tls".into())),
            paths: vec![IngressPath {
                path: Spanned::bare("/".into()),
                ..IngressPath::default()
            }],
            ..Ingress::default()
        });
        app
    }

    #[test]
    fn forwards_ingress_hosts_load_balancers_and_node_ports() {
        let live = BTreeMap::from([(
            "edge".to_string(),
            json!({"spec": {"ports": [{"port": 443, "nodePort": 30443}]},
                   "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}),
        )]);
        let found: Vec<(&str, Option<String>)> =
            urls(&app(), &live, &BTreeMap::new(), Some("10.0.0.5"))
                .into_iter()
                .map(|u| (u.kind, u.url))
                .collect();
        assert_eq!(
            found,
            [
                ("forward", Some("http://127.0.0.1:18080".into())),
                ("ingress", Some("https://shop.example.com/".into())),
                ("load-balancer", Some("https://203.0.113.7:443".into())),
                ("node-port", Some("http://10.0.0.5:30443".into())),
            ]
        );
    }

    #[test]
    fn a_pending_load_balancer_has_no_url_yet() {
        let live = BTreeMap::from([(
            "edge".to_string(),
            json!({"spec": {"ports": [{"port": 80}]}}),
        )]);
        let lb: Vec<Url> = urls(&app(), &live, &BTreeMap::new(), None)
            .into_iter()
            .filter(|u| u.kind == "load-balancer")
            .collect();
        assert_eq!(lb.len(), 1);
        assert_eq!(lb[0].url, None);
    }
}
