//! Sim-only hooks that make simulated pods reachable: which real local address a pod's container
//! port reaches (for port-forward, http readiness probes and webhook Services), what a command run
//! in a pod's container does (`pods/exec`), and the log lines tests add to containers. Registered by
//! tests through [`crate::RunningSim::map_port`], [`crate::RunningSim::on_exec`] and
//! [`crate::RunningSim::append_log`].

pub(crate) mod log_buffer;

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::registry::selectors::LabelSelector;
use crate::status::ApiError;

/// One mapping: pods in `namespace` whose labels match `selector` have `port` reach `to`.
#[derive(Debug, Clone)]
pub struct PortMapping {
    /// The namespace of the pods.
    pub namespace: String,
    /// Which pods' labels are matched.
    pub selector: LabelSelector,
    /// The container port that is mapped.
    pub port: u16,
    /// Where connections to that port go.
    pub to: SocketAddr,
}

/// What a command run in a simulated container is asked to do (`kubectl exec`, kube's `exec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The pod's name.
    pub pod: String,
    /// The pod's namespace.
    pub namespace: String,
    /// The container's name (defaulted when the pod has one container).
    pub container: String,
    /// The command and its arguments (`kubectl exec POD -- cmd arg...`).
    pub command: Vec<String>,
    /// Everything the client sent on stdin (empty without `-i`/`stdin=true`); the command runs once
    /// the client closed stdin.
    pub stdin: Vec<u8>,
}

/// What a command printed and how it exited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// What the command wrote to stdout.
    pub stdout: Vec<u8>,
    /// What the command wrote to stderr.
    pub stderr: Vec<u8>,
    /// The exit code (0 for success).
    pub exit_code: i32,
}

impl ExecOutput {
    /// Exit code 0 with this stdout.
    pub fn ok(stdout: impl Into<Vec<u8>>) -> ExecOutput {
        ExecOutput {
            stdout: stdout.into(),
            ..ExecOutput::default()
        }
    }

    /// This exit code and stderr, no stdout.
    pub fn fail(exit_code: i32, stderr: impl Into<Vec<u8>>) -> ExecOutput {
        ExecOutput {
            stdout: Vec::new(),
            stderr: stderr.into(),
            exit_code,
        }
    }

    /// Every part given.
    pub fn new(
        stdout: impl Into<Vec<u8>>,
        stderr: impl Into<Vec<u8>>,
        exit_code: i32,
    ) -> ExecOutput {
        ExecOutput {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code,
        }
    }
}

/// A registered command implementation.
pub type ExecHandler = Arc<dyn Fn(&ExecRequest) -> ExecOutput + Send + Sync + 'static>;

/// One exec registration: commands starting with `prefix` (every command when empty) in pods of
/// `namespace` (every namespace when empty) whose labels match `selector`.
#[derive(Clone)]
struct ExecHook {
    namespace: String,
    selector: LabelSelector,
    prefix: Vec<String>,
    handler: ExecHandler,
}

/// Every registered hook of one simulator.
#[derive(Default)]
pub struct Hooks {
    ports: RwLock<Vec<PortMapping>>,
    execs: RwLock<Vec<ExecHook>>,
    /// Log lines added by tests (`RunningSim::append_log`), read by `pods/log`.
    pub logs: crate::hooks::log_buffer::LogBuffer,
    /// How many times the port mappings changed (the controllers take a turn when they do: a
    /// mapped port makes a readiness probe reachable).
    port_changes: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let execs = self.execs.read().map(|e| e.len()).unwrap_or(0);
        f.debug_struct("Hooks")
            .field("ports", &self.ports)
            .field("execs", &execs)
            .finish_non_exhaustive()
    }
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
        self.port_changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// How many times the port mappings changed so far.
    pub fn port_changes(&self) -> u64 {
        self.port_changes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Removes every mapping of `port` in `namespace`.
    pub fn unmap_port(&self, namespace: &str, port: u16) {
        if let Ok(mut list) = self.ports.write() {
            list.retain(|m| !(m.namespace == namespace && m.port == port));
        }
        self.port_changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Registers what commands starting with `prefix` (every command when `prefix` is empty) do in
    /// the containers of the pods in `namespace` (every namespace when empty) whose labels match
    /// `selector`. The most recent matching registration wins.
    pub fn on_exec(
        &self,
        namespace: &str,
        selector: &str,
        prefix: &[&str],
        handler: ExecHandler,
    ) -> Result<(), ApiError> {
        let parsed = LabelSelector::parse(selector)?;
        let mut list = self
            .execs
            .write()
            .map_err(|_| ApiError::internal("hooks lock poisoned"))?;
        list.push(ExecHook {
            namespace: namespace.to_string(),
            selector: parsed,
            prefix: prefix.iter().map(|p| p.to_string()).collect(),
            handler,
        });
        Ok(())
    }

    /// The handler of `command` in `pod`, if one is registered (the most recent match wins).
    pub fn resolve_exec(&self, pod: &Value, command: &[String]) -> Option<ExecHandler> {
        let ns = pod.pointer("/metadata/namespace").and_then(Value::as_str)?;
        let list = self.execs.read().ok()?;
        list.iter()
            .rev()
            .find(|h| {
                (h.namespace.is_empty() || h.namespace == ns)
                    && command.starts_with(&h.prefix)
                    && h.selector.matches(pod)
            })
            .map(|h| h.handler.clone())
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

    #[test]
    fn exec_handlers_match_namespace_labels_and_prefix() {
        let hooks = Hooks::default();
        let cmd = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let req = ExecRequest {
            pod: "p".into(),
            namespace: "shop".into(),
            container: "c".into(),
            command: cmd(&["migrate", "up"]),
            stdin: Vec::new(),
        };
        hooks
            .on_exec("shop", "app=web", &[], Arc::new(|_| ExecOutput::ok("any")))
            .unwrap();
        hooks
            .on_exec(
                "",
                "",
                &["migrate"],
                Arc::new(|r| ExecOutput::ok(r.command.join(" "))),
            )
            .unwrap();
        let web = json!({"metadata": {"namespace": "shop", "labels": {"app": "web"}}});
        let run =
            |pod: &Value, c: &[&str]| hooks.resolve_exec(pod, &cmd(c)).map(|h| h(&req).stdout);
        assert_eq!(run(&web, &["migrate", "up"]), Some(b"migrate up".to_vec()));
        assert_eq!(run(&web, &["ls"]), Some(b"any".to_vec()));
        let db = json!({"metadata": {"namespace": "shop", "labels": {"app": "db"}}});
        assert_eq!(run(&db, &["ls"]), None);
        assert!(run(&db, &["migrate"]).is_some());
    }
}
