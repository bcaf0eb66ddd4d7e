//! The `pods/exec` and `pods/attach` subresources over WebSocket (`v5.channel.k8s.io`, or
//! `v4.channel.k8s.io`): the request is checked as the real server does (pod, host, container,
//! command), the connection is upgraded, and the session (`exec_session`) runs the command — a
//! handler registered with `RunningSim::on_exec`, else a built-in (`exec_builtin`) — or, for
//! `attach`, streams the container's output.
//!
//! SPDY (`Upgrade: SPDY/3.1`, what kubectl falls back to) is refused with 400: kubectl 1.33 and kube
//! both speak WebSocket first.

use std::sync::Arc;

use http::{Request, header};
use serde_json::Value;

use super::exec_session::{self, Protocol, Session};
use crate::apiserver::app::App;
use crate::apiserver::http::{Query, Resp, error};
use crate::cluster::Cluster;
use crate::status::ApiError;

/// Sub-protocols served, in order of preference.
const PROTOCOLS: [(&str, Protocol); 2] = [
    ("v5.channel.k8s.io", Protocol::V5),
    ("v4.channel.k8s.io", Protocol::V4),
];

/// Answers `pods/exec` and `pods/attach` requests.
pub async fn handle(
    app: Arc<App>,
    mut req: Request<hyper::body::Incoming>,
    ns: &str,
    pod: &str,
) -> Resp {
    let attach = req.uri().path().ends_with("/attach");
    let query = Query::parse(req.uri().query().unwrap_or(""));
    let session = match prepare(&app.cluster(), &req, &query, ns, pod, attach) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let protocol = match negotiate(&req) {
        Ok(p) => p,
        Err(e) => return error(&e),
    };
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            exec_session::run(app, upgraded, protocol, session).await;
        }
    });
    let mut resp = super::switching_protocols();
    let name = PROTOCOLS
        .iter()
        .find(|(_, p)| *p == protocol)
        .map(|(name, _)| *name);
    super::websocket_headers(resp.headers_mut(), req.headers(), name);
    resp
}

/// Checks the WebSocket upgrade request; returns the chosen protocol.
fn negotiate<B>(req: &Request<B>) -> Result<Protocol, ApiError> {
    let h = |name: header::HeaderName| {
        req.headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",")
    };
    let upgrade = h(header::UPGRADE).to_ascii_lowercase();
    if upgrade.contains("spdy") {
        return Err(ApiError::bad_request(
            "piceli-sim serves exec and attach over WebSocket (v5.channel.k8s.io, v4.channel.k8s.io) only, not SPDY",
        ));
    }
    if !upgrade.contains("websocket") {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    if req.headers().get(header::SEC_WEBSOCKET_KEY).is_none() {
        return Err(ApiError::bad_request("missing Sec-WebSocket-Key header"));
    }
    let offered = h(header::SEC_WEBSOCKET_PROTOCOL);
    let offered: Vec<&str> = offered.split(',').map(str::trim).collect();
    let protocol = offered
        .iter()
        .find_map(|o| PROTOCOLS.iter().find(|(n, _)| n == o).map(|(_, p)| *p))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unsupported WebSocket sub-protocols {offered:?}: piceli-sim serves v5.channel.k8s.io and v4.channel.k8s.io"
            ))
        })?;
    Ok(protocol)
}

/// Validates the request against the pod, as the API server and kubelet would.
fn prepare<B>(
    cluster: &Cluster,
    req: &Request<B>,
    query: &Query,
    ns: &str,
    name: &str,
    attach: bool,
) -> Result<Session, ApiError> {
    if req.method() != http::Method::GET && req.method() != http::Method::POST {
        return Err(ApiError::method_not_allowed(req.uri().path()));
    }
    let pod = cluster
        .get(&cluster.rt("", "v1", "pods")?, ns, name)?
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let container = pick_container(&pod, name, query.get("container").unwrap_or(""))?;
    let command: Vec<String> = query.all("command").into_iter().map(String::from).collect();
    if !attach && command.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    if str_at(&pod, "/spec/nodeName").is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    if !running(&pod, &container) {
        return Err(ApiError::bad_request(format!(
            "container not found ({container:?})"
        )));
    }
    let tty = query.flag("tty");
    Ok(Session {
        pod,
        container,
        command,
        attach,
        stdin: query.flag("stdin"),
        stdout: query.flag("stdout"),
        stderr: query.flag("stderr") && !tty,
        tty,
    })
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Every container name of a pod (containers, init and ephemeral containers).
pub fn container_names(pod: &Value) -> Vec<String> {
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| {
            pod.pointer(&format!("/spec/{k}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(String::from))
        .collect()
}

/// The container a request addresses: the named one, or the only one (the real server's errors
/// otherwise).
pub fn pick_container(pod: &Value, name: &str, wanted: &str) -> Result<String, ApiError> {
    let names = container_names(pod);
    if wanted.is_empty() {
        let main: Vec<String> = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        return match main.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                main.join(" ")
            ))),
        };
    }
    if names.iter().any(|n| n == wanted) {
        Ok(wanted.to_string())
    } else {
        Err(ApiError::bad_request(format!(
            "container {wanted} is not valid for pod {name}"
        )))
    }
}

/// Whether the container is running (its status says so).
fn running(pod: &Value, container: &str) -> bool {
    super::log_lines::container_status(pod, container)
        .is_some_and(|s| s.pointer("/state/running").is_some())
}
