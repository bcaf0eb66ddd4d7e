//! Where a webhook call goes. `clientConfig.url` (https only) is dialled as is; for
//! `clientConfig.service` the Service's port is found, its pods are those its selector matches (their
//! named ports resolved), and the first pod whose target port is mapped to a real address
//! ([`crate::hooks::Hooks::resolve_port`]) is dialled, with TLS verified for `NAME.NAMESPACE.svc` —
//! unless the Service port is routed to a local process ([`crate::routes`]), which is dialled then.

use std::net::{SocketAddr, ToSocketAddrs};

use serde_json::Value;

use super::client::Target;
use super::config::ClientConfig;
use crate::hooks::Hooks;
use crate::storage::Store;

/// What a webhook call reaches a Service's pods through: the store (the Service, its pods, the
/// routes) and the pod ports mapped to real local addresses.
pub(crate) struct Reach<'a> {
    /// The object store.
    pub store: &'a Store,
    /// The sim-only hooks (port mappings).
    pub hooks: &'a Hooks,
}

/// Appends the real server's `?timeout=` query parameter to a path.
fn with_timeout(path: &str, seconds: u64) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}timeout={seconds}s")
}

/// Resolves a webhook's client configuration to a dialable target.
pub fn resolve(
    reach: &Reach<'_>,
    client: &ClientConfig,
    timeout_secs: u64,
) -> Result<Target, String> {
    match client {
        ClientConfig::Invalid(why) => Err(why.clone()),
        ClientConfig::Url(url) => from_url(url, timeout_secs),
        ClientConfig::Service {
            namespace,
            name,
            path,
            port,
        } => from_service(reach, namespace, name, path, *port, timeout_secs),
    }
}

fn from_url(url: &str, timeout_secs: u64) -> Result<Target, String> {
    let Some(rest) = url.strip_prefix("https://") else {
        return Err(format!("webhook URL {url:?} must use the https scheme"));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let (host, port) = split_host_port(authority)?;
    let path = with_timeout(&path, timeout_secs);
    let url = format!("https://{authority}{path}");
    // Looked up when the client dials, so a failure reads as the POST's (Go's net.DNSError).
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| format!("Post {url:?}: dial tcp: lookup {host}: no such host"))?;
    Ok(Target {
        addr,
        server_name: host,
        host: authority.to_string(),
        url,
        path,
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(authority: &str) -> Result<(String, u16), String> {
    let bad = || format!("invalid webhook URL host {authority:?}");
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad())?,
            None => 443,
        };
        return Ok((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Ok((h.to_string(), p.parse().map_err(|_| bad())?)),
        None => Ok((authority.to_string(), 443)),
    }
}

fn from_service(
    reach: &Reach<'_>,
    ns: &str,
    name: &str,
    path: &str,
    port: u16,
    timeout_secs: u64,
) -> Result<Target, String> {
    let host = format!("{name}.{ns}.svc");
    let path = with_timeout(if path.is_empty() { "/" } else { path }, timeout_secs);
    let url = format!("https://{host}:{port}{path}");
    // The apiserver resolves the Service when its client dials, so these read as the POST's failure.
    let post = |why: String| format!("Post {url:?}: {why}");
    let svc = reach
        .store
        .get("/services", ns, name)
        .map_err(|e| post(e.to_string()))?
        .ok_or_else(|| post(format!("service \"{name}\" not found")))?;
    let svc_port = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .and_then(|ps| {
            ps.iter()
                .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))
        })
        .ok_or_else(|| {
            post(format!(
                "no service port {port} found for service \"{name}\""
            ))
        })?;
    if let Some(addr) = crate::routes::lookup(reach.store, ns, name, port) {
        return Ok(Target {
            addr,
            server_name: host.clone(),
            host: format!("{host}:{port}"),
            url,
            path,
        });
    }
    let target_port = svc_port.get("targetPort").cloned().unwrap_or(port.into());
    let no_endpoints = || post(format!("no endpoints available for service \"{name}\""));
    let addr = selected_pod_address(reach, ns, &svc, &target_port).map_err(|e| post(e.message))?;
    let addr = addr.ok_or_else(no_endpoints)?;
    Ok(Target {
        addr,
        server_name: host.clone(),
        host: format!("{host}:{port}"),
        url,
        path,
    })
}

/// The mapped address of the first live pod a Service's selector matches, at its `target_port`
/// (a number or a container port name); `None` when no selected pod's port is mapped.
pub(crate) fn selected_pod_address(
    reach: &Reach<'_>,
    ns: &str,
    svc: &Value,
    target_port: &Value,
) -> Result<Option<SocketAddr>, crate::status::ApiError> {
    let Some(selector) = svc
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    let (pods, _) = reach.store.list("/pods", Some(ns), None)?;
    Ok(pods.iter().find_map(|p| {
        let pod = &p.object;
        let labels = pod.pointer("/metadata/labels");
        let selected = selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !selected || pod.pointer("/metadata/deletionTimestamp").is_some() {
            return None;
        }
        let number = pod_port(pod, target_port)?;
        reach.hooks.resolve_port(pod, number)
    }))
}

/// A numeric target port, or a named one looked up in the pod's container ports.
pub(crate) fn pod_port(pod: &Value, target: &Value) -> Option<u16> {
    if let Some(n) = target.as_u64() {
        return u16::try_from(n).ok();
    }
    let wanted = target.as_str()?;
    if let Ok(n) = wanted.parse::<u16>() {
        return Some(n);
    }
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("ports").and_then(Value::as_array))
        .flatten()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(wanted))
        .and_then(|p| p.get("containerPort").and_then(Value::as_u64))
        .and_then(|n| u16::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_split_into_address_host_and_path() {
        let t = from_url("https://127.0.0.1:8443/validate", 5).expect("url");
        assert_eq!(
            t.addr,
            "127.0.0.1:8443".parse::<SocketAddr>().expect("addr")
        );
        assert_eq!(t.server_name, "127.0.0.1");
        assert_eq!(t.path, "/validate?timeout=5s");
        assert_eq!(t.url, "https://127.0.0.1:8443/validate?timeout=5s");
        let t = from_url("https://127.0.0.1:9?x=1", 1).expect("url");
        assert_eq!(t.path, "/?x=1&timeout=1s");
        assert!(from_url("http://127.0.0.1/", 1).is_err());
        assert_eq!(split_host_port("[::1]:7"), Ok(("::1".into(), 7)));
        assert_eq!(
            split_host_port("example.com"),
            Ok(("example.com".into(), 443))
        );
    }

    #[test]
    fn named_and_numeric_target_ports() {
        let pod = json!({"spec": {"containers": [{"ports": [{"name": "https", "containerPort": 9443}]}]}});
        assert_eq!(pod_port(&pod, &json!("https")), Some(9443));
        assert_eq!(pod_port(&pod, &json!(8443)), Some(8443));
        assert_eq!(pod_port(&pod, &json!("missing")), None);
    }
}
