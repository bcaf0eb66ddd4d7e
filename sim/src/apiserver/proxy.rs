//! The `proxy` subresource of pods and services (`kubectl proxy`, `kubectl get --raw
//! …/pods/NAME:PORT/proxy/PATH`): the request is forwarded over HTTP/1.1 to the pod port's mapped
//! address ([`crate::hooks::Hooks::map_port`]) or, for a Service, to its route
//! ([`crate::routes`]) or a selected pod's mapped target port, as kube-apiserver's proxy handler
//! forwards it to the pod IP. The `Authorization` header is not passed on. Only `http` is proxied
//! (an `https:` prefix is a 503 here).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::apiserver::app::App;
use crate::apiserver::http::{Resp, SimBody, error};
use crate::apiserver::router::Target;
use crate::status::ApiError;

fn unavailable(message: String) -> ApiError {
    ApiError::new(503, "ServiceUnavailable", message)
}

/// `[scheme:]name[:port]` of a proxy path segment.
fn parse_name(text: &str) -> (&str, &str, &str) {
    let parts: Vec<&str> = text.splitn(3, ':').collect();
    match parts.as_slice() {
        [scheme @ ("http" | "https"), name, port] => (scheme, name, port),
        [scheme @ ("http" | "https"), name] => (scheme, name, ""),
        [name, port] => ("", name, port),
        _ => ("", text, ""),
    }
}

/// Where a pod's `port` (a number, a named container port, or the first container port) is served.
fn pod_address(hooks: &crate::hooks::Hooks, pod: &Value, port: &str) -> Option<SocketAddr> {
    let number = if port.is_empty() {
        pod.pointer("/spec/containers/0/ports/0/containerPort")
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())?
    } else {
        crate::admission::pod_port(pod, &Value::from(port))?
    };
    hooks.resolve_port(pod, number)
}

fn resolve(app: &App, t: &Target, name: &str, port: &str) -> Result<SocketAddr, ApiError> {
    let ns = t.namespace.as_deref().unwrap_or("");
    if t.resource == "pods" {
        let pod = app
            .backend
            .store
            .get("/pods", ns, name)?
            .ok_or_else(|| ApiError::not_found("", "pods", name))?;
        return pod_address(&app.hooks, &pod, port).ok_or_else(|| {
            unavailable(format!(
                "error trying to reach service: pod {ns}/{name} port {port} is not mapped to this machine (RunningSim::map_port)"
            ))
        });
    }
    let svc = app
        .backend
        .store
        .get("/services", ns, name)?
        .ok_or_else(|| ApiError::not_found("", "services", name))?;
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let chosen = ports
        .iter()
        .find(|p| {
            port.is_empty()
                || p.get("name").and_then(Value::as_str) == Some(port)
                || p.get("port")
                    .and_then(Value::as_u64)
                    .map(|n| n.to_string())
                    .as_deref()
                    == Some(port)
        })
        .ok_or_else(|| {
            unavailable(format!(
                "no service port {port:?} found for service \"{name}\""
            ))
        })?;
    let number = chosen
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|n| u16::try_from(n).ok())
        .unwrap_or(0);
    if let Some(addr) = crate::routes::lookup(&app.backend.store, ns, name, number) {
        return Ok(addr);
    }
    let target = chosen
        .get("targetPort")
        .cloned()
        .unwrap_or(Value::from(number));
    crate::admission::selected_pod_address(
        &crate::admission::Reach {
            store: &app.backend.store,
            hooks: &app.hooks,
        },
        ns,
        &svc,
        &target,
    )?
    .ok_or_else(|| unavailable(format!("no endpoints available for service \"{name}\"")))
}

/// The path after `…/NAME/proxy` (at least `/`), with the query string.
fn forwarded_path(req: &Request<hyper::body::Incoming>) -> String {
    let path = req.uri().path();
    let rest = path
        .find("/proxy")
        .map(|i| &path[i + "/proxy".len()..])
        .unwrap_or("");
    let rest = if rest.is_empty() { "/" } else { rest };
    match req.uri().query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest.to_string(),
    }
}

async fn forward(
    addr: SocketAddr,
    mut req: Request<hyper::body::Incoming>,
) -> Result<Resp, ApiError> {
    let reach = |e: &dyn std::fmt::Display| {
        unavailable(format!(
            "error trying to reach service: dial tcp {addr}: {e}"
        ))
    };
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| reach(&e))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| reach(&e))?;
    tokio::spawn(conn);
    let path = forwarded_path(&req);
    *req.uri_mut() = path
        .parse()
        .map_err(|_| ApiError::bad_request("invalid proxy path"))?;
    let headers = req.headers_mut();
    headers.remove(http::header::AUTHORIZATION);
    for h in ["impersonate-user", "impersonate-group"] {
        headers.remove(h);
    }
    if let Ok(host) = http::HeaderValue::from_str(&addr.to_string()) {
        headers.insert(http::header::HOST, host);
    }
    let resp = sender.send_request(req).await.map_err(|e| reach(&e))?;
    let (parts, mut body) = resp.into_parts();
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data()
                && tx.send(data).await.is_err()
            {
                break;
            }
        }
    });
    Ok(http::Response::from_parts(parts, SimBody::Stream(rx)))
}

/// Handles `…/pods/NAME/proxy/…` and `…/services/NAME/proxy/…` (already authorized).
pub async fn handle(app: Arc<App>, req: Request<hyper::body::Incoming>, t: Target) -> Resp {
    let raw = t.name.clone().unwrap_or_default();
    let (scheme, name, port) = parse_name(&raw);
    if scheme == "https" {
        return error(&unavailable(
            "the local cluster proxies http only; an https: proxy is not supported".into(),
        ));
    }
    let (name, port) = (name.to_string(), port.to_string());
    let a = app.clone();
    let t2 = t.clone();
    let addr = match tokio::task::spawn_blocking(move || resolve(&a, &t2, &name, &port)).await {
        Ok(Ok(addr)) => addr,
        Ok(Err(e)) => return error(&e),
        Err(e) => return error(&ApiError::internal(e)),
    };
    match forward(addr, req).await {
        Ok(r) => r,
        Err(e) => error(&e),
    }
}

/// Whether a target is a proxy subresource this module serves.
pub fn is_proxy(t: &Target) -> bool {
    t.group.is_empty()
        && matches!(t.resource.as_str(), "pods" | "services")
        && t.namespace.is_some()
        && t.name.is_some()
        && t.subresource.as_deref() == Some("proxy")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_scheme_name_and_port() {
        assert_eq!(parse_name("web:8080"), ("", "web", "8080"));
        assert_eq!(parse_name("https:web:443"), ("https", "web", "443"));
        assert_eq!(parse_name("http:web"), ("http", "web", ""));
        assert_eq!(parse_name("web"), ("", "web", ""));
    }
}
