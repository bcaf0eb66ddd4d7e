//! Sim-only hooks that make simulated pods reachable: which real local address a pod's container
//! port reaches (for port-forward, http readiness probes and webhook Services). Registered by tests
//! through [`crate::RunningSim::map_port`].

use std::net::SocketAddr;
use std::sync::RwLock;

use serde_json::Value;

use crate::selectors::LabelSelector;
use crate::status::ApiError;

/// One mapping: pods in `namespace` whose labels match `selector` have `port` reach `to`.
#[derive(Debug, Clone)]
pub struct PortMapping {
    pub namespace: String,
    pub selector: LabelSelector,
    pub port: u16,
    pub to: SocketAddr,
}

/// Every registered hook of one simulator.
#[derive(Debug, Default)]
pub struct Hooks {
    ports: RwLock<Vec<PortMapping>>,
}

impl Hooks {
    /// Maps `port` of the pods in `namespace` matching the label `selector` (e.g.
    /// `app.kubernetes.io/name=web`; empty selects every pod) to a real address. A later mapping of the
    /// same namespace, selector and port replaces the earlier one.
    pub fn map_port(
        &self,
        namespace: &str,
        selector: &str,
        port: u16,
        to: SocketAddr,
    ) -> Result<(), ApiError> {
        let parsed = LabelSelector::parse(selector)?;
        let mut list = self
            .ports
            .write()
            .map_err(|_| ApiError::internal("hooks lock poisoned"))?;
        list.retain(|m| !(m.namespace == namespace && m.selector == parsed && m.port == port));
        list.push(PortMapping {
            namespace: namespace.to_string(),
            selector: parsed,
            port,
            to,
        });
        Ok(())
    }

    /// Removes every mapping of `port` in `namespace`.
    pub fn unmap_port(&self, namespace: &str, port: u16) {
        if let Ok(mut list) = self.ports.write() {
            list.retain(|m| !(m.namespace == namespace && m.port == port));
        }
    }

    /// The address a pod's port reaches, if mapped (the most recent matching mapping wins).
    pub fn resolve_port(&self, pod: &Value, port: u16) -> Option<SocketAddr> {
        let ns = pod.pointer("/metadata/namespace").and_then(Value::as_str)?;
        let list = self.ports.read().ok()?;
        list.iter()
            .rev()
            .find(|m| m.namespace == ns && m.port == port && m.selector.matches(pod))
            .map(|m| m.to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_by_namespace_labels_and_port() {
        let hooks = Hooks::default();
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2000".parse().unwrap();
        hooks.map_port("shop", "app=web", 8080, a).unwrap();
        let pod = json!({"metadata": {"namespace": "shop", "labels": {"app": "web"}}});
        assert_eq!(hooks.resolve_port(&pod, 8080), Some(a));
        assert_eq!(hooks.resolve_port(&pod, 9090), None);
        let other = json!({"metadata": {"namespace": "shop", "labels": {"app": "db"}}});
        assert_eq!(hooks.resolve_port(&other, 8080), None);
        hooks.map_port("shop", "app=web", 8080, b).unwrap();
        assert_eq!(hooks.resolve_port(&pod, 8080), Some(b));
        hooks.unmap_port("shop", 8080);
        assert_eq!(hooks.resolve_port(&pod, 8080), None);
        assert!(hooks.map_port("shop", "a b c", 1, a).is_err());
    }
}
