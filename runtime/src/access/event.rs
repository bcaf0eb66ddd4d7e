//! What `access` tells its user while it runs: one line per event, as text or as a JSON object per line.

use serde_json::json;

/// Something `access` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A forward is listening.
    Ready {
        /// The Service.
        name: String,
        /// The local port bound.
        local_port: u16,
        /// The Service port.
        service_port: i64,
        /// The pod the first connection would reach, with its port (`None`: no ready pod yet).
        pod: Option<(String, u16)>,
    },
    /// A connection went to another pod than the last one (a pod went away, a rollout).
    Pod {
        /// The Service.
        name: String,
        /// The pod now reached.
        pod: String,
        /// Its port.
        port: u16,
    },
    /// A health probe's result changed.
    Health {
        /// The Service.
        name: String,
        /// The probed path.
        path: String,
        /// Whether it answered 2xx or 3xx.
        healthy: bool,
        /// The HTTP status, when one came back.
        status: Option<u16>,
        /// What happened (the status line, or why there was none).
        message: String,
    },
    /// A connection could not reach any pod after its retries.
    ConnectFailed {
        /// The Service.
        name: String,
        /// Why.
        message: String,
    },
    /// Every listener is closed.
    Stopped,
}

impl Event {
    /// The text line.
    pub fn to_text(&self) -> String {
        match self {
            Event::Ready {
                name,
                local_port,
                service_port,
                pod,
            } => {
                let pod = match pod {
                    Some((p, port)) => format!("pod {p}:{port}"),
                    None => "no ready pod yet".into(),
                };
                format!(
                    "{name}  http://127.0.0.1:{local_port} -> svc/{name}:{service_port} ({pod})"
                )
            }
            Event::Pod { name, pod, port } => format!("{name}  now reaching pod {pod}:{port}"),
            Event::Health {
                name,
                path,
                healthy,
                message,
                ..
            } => {
                let verdict = if *healthy { "healthy" } else { "UNHEALTHY" };
                format!("{name}  health GET {path}: {verdict} ({message})")
            }
            Event::ConnectFailed { name, message } => {
                format!("{name}  connection failed: {message}")
            }
            Event::Stopped => "access stopped; every listener is closed".into(),
        }
    }

    /// The JSON line (`event` names the kind).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Event::Ready {
                name,
                local_port,
                service_port,
                pod,
            } => json!({
                "event": "ready",
                "name": name,
                "url": format!("http://127.0.0.1:{local_port}"),
                "local_port": local_port,
                "service": name,
                "service_port": service_port,
                "pod": pod.as_ref().map(|p| &p.0),
                "pod_port": pod.as_ref().map(|p| p.1),
            }),
            Event::Pod { name, pod, port } => {
                json!({"event": "pod", "name": name, "pod": pod, "pod_port": port})
            }
            Event::Health {
                name,
                path,
                healthy,
                status,
                message,
            } => json!({
                "event": "health", "name": name, "path": path, "healthy": healthy,
                "status": status, "message": message,
            }),
            Event::ConnectFailed { name, message } => {
                json!({"event": "error", "name": name, "message": message})
            }
            Event::Stopped => json!({"event": "stopped"}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_names_url_service_and_pod() {
        let e = Event::Ready {
            name: "web".into(),
            local_port: 18080,
            service_port: 80,
            pod: Some(("web-7d9-x2k".into(), 80)),
        };
        assert_eq!(
            e.to_text(),
            "web  http://127.0.0.1:18080 -> svc/web:80 (pod web-7d9-x2k:80)"
        );
        assert_eq!(e.to_json()["url"], "http://127.0.0.1:18080");
        assert_eq!(e.to_json()["pod"], "web-7d9-x2k");
    }
}
