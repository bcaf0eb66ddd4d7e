//! HTTP readiness probes of simulated pods: a container whose `readinessProbe.httpGet` port
//! (a number, or a name resolved from the container's `ports`) is mapped to a real address
//! ([`crate::hooks::Hooks::resolve_port`]) gets a real `GET` there; 200–399 means ready, anything
//! else (or no answer within 1 s) not ready. Probes with
//! scheme HTTPS, and probes of unmapped ports, are not sent: those pods keep the plain timing.
//!
//! Timing is the simulator's, not the kubelet's: every probed pod is probed every
//! `max(pod_ready_delay, 100 ms)` (`periodSeconds` and `initialDelaySeconds` are ignored), and a
//! pod stays not Ready until every probed container's latest probe succeeded.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header;
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::cluster::Cluster;

/// How long a probe may take (the kubelet's default `timeoutSeconds`; longer ones are cut to it).
const TIMEOUT: Duration = Duration::from_secs(1);

/// The shortest time between two probes of one pod.
pub const MIN_PERIOD: Duration = Duration::from_millis(100);

/// One probe to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub addr: SocketAddr,
    pub path: String,
    pub port: u16,
    pub timeout: Duration,
}

/// The mapped http readiness probes of a pod, one per probed container (in container order).
pub fn targets(hooks: &crate::hooks::Hooks, pod: &Value) -> Vec<Target> {
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for c in &containers {
        let Some(get) = c.pointer("/readinessProbe/httpGet") else {
            continue;
        };
        if get
            .get("scheme")
            .and_then(Value::as_str)
            .is_some_and(|s| s.eq_ignore_ascii_case("HTTPS"))
        {
            continue;
        }
        let port = match get.get("port") {
            Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Some(Value::String(name)) => name.parse::<u16>().ok().or_else(|| named_port(c, name)),
            _ => None,
        };
        let Some(port) = port else { continue };
        let Some(addr) = hooks.resolve_port(pod, port) else {
            continue;
        };
        let path = match get.get("path").and_then(Value::as_str) {
            Some(p) if p.starts_with('/') => p.to_string(),
            Some(p) if !p.is_empty() => format!("/{p}"),
            _ => "/".to_string(),
        };
        out.push(Target {
            addr,
            path,
            port,
            timeout: TIMEOUT,
        });
    }
    out
}

fn named_port(container: &Value, name: &str) -> Option<u16> {
    container
        .get("ports")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|p| p.get("containerPort")?.as_u64())
        .and_then(|n| u16::try_from(n).ok())
}

/// Sends one probe over hyper's HTTP/1.1 client, with the kubelet's headers: whether the answer's
/// status is 200–399 (the body is not read).
pub async fn probe(t: &Target) -> bool {
    let run = async {
        let stream = tokio::net::TcpStream::connect(t.addr).await.ok()?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        let driver = tokio::spawn(conn);
        let request = http::Request::get(t.path.as_str())
            .header(header::HOST, t.addr.to_string())
            .header(header::USER_AGENT, "kube-probe/1.33")
            .header(header::ACCEPT, "*/*")
            .header(header::CONNECTION, "close")
            .body(Empty::<Bytes>::new())
            .ok()?;
        let status = sender.send_request(request).await.ok()?.status();
        driver.abort();
        Some((200..400).contains(&status.as_u16()))
    };
    matches!(tokio::time::timeout(t.timeout, run).await, Ok(Some(true)))
}

/// Probe bookkeeping across controller turns, by pod uid.
#[derive(Default)]
pub struct Probes {
    /// The latest result per probed container (filled in by the probe tasks).
    results: Arc<Mutex<HashMap<String, Vec<Option<bool>>>>>,
    /// When each pod was last probed.
    sent: HashMap<String, Instant>,
}

impl Probes {
    /// Forgets pods that are gone.
    pub fn retain(&mut self, live: &std::collections::HashSet<&str>) {
        self.sent.retain(|k, _| live.contains(k.as_str()));
        if let Ok(mut r) = self.results.lock() {
            r.retain(|k, _| live.contains(k.as_str()));
        }
    }

    /// The readiness the probes give `pod` (`None` when it has no mapped http probe), sending
    /// new probes when `period` has passed since the last ones. Call from within a Tokio runtime.
    pub fn readiness(
        &mut self,
        cluster: &Cluster,
        pod: &Value,
        uid: &str,
        period: Duration,
        now: Instant,
    ) -> Option<bool> {
        let targets = targets(cluster.hooks(), pod);
        if targets.is_empty() {
            self.sent.remove(uid);
            return None;
        }
        let due = self
            .sent
            .get(uid)
            .is_none_or(|at| now.duration_since(*at) >= period);
        if due && let Ok(handle) = tokio::runtime::Handle::try_current() {
            self.sent.insert(uid.to_string(), now);
            for (i, t) in targets.iter().cloned().enumerate() {
                let (results, uid, n) = (self.results.clone(), uid.to_string(), targets.len());
                handle.spawn(async move {
                    let ok = probe(&t).await;
                    if let Ok(mut r) = results.lock() {
                        let slot = r.entry(uid).or_default();
                        slot.resize(n, None);
                        slot[i] = Some(ok);
                    }
                });
            }
        }
        let r = self.results.lock().ok()?;
        let have = r.get(uid);
        Some(have.is_some_and(|v| v.len() == targets.len() && v.iter().all(|x| *x == Some(true))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_ports_resolve_from_the_container() {
        let c = serde_json::json!({"ports": [{"name": "http", "containerPort": 8080}]});
        assert_eq!(named_port(&c, "http"), Some(8080));
        assert_eq!(named_port(&c, "grpc"), None);
    }

    #[tokio::test]
    async fn status_codes_decide() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            for code in [204, 302, 404] {
                let (mut c, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 1024];
                let _ = c.read(&mut buf).await;
                let _ = c
                    .write_all(format!("HTTP/1.1 {code} X\r\n\r\n").as_bytes())
                    .await;
            }
        });
        let t = Target {
            addr,
            path: "/".into(),
            port: 1,
            timeout: Duration::from_secs(1),
        };
        assert!(probe(&t).await);
        assert!(probe(&t).await);
        assert!(!probe(&t).await);
    }
}
