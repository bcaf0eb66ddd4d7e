//! Streaming pod subresources — `portforward`, `exec`/`attach` and `log` — which take the raw
//! request (so they can upgrade the connection to SPDY or WebSocket) instead of a collected body.
//!
//! What a kubelet serves for these, the simulator serves here, as apiserver-side HTTP handlers: they
//! receive the server state (`Arc<App>`) as every handler does, and the tasks that outlive the
//! request (an exec or attach session, a followed log, a port-forward session and its forwards) keep
//! that `Arc` because a spawned task must own what it reads. Below them, everything reads the
//! cluster through the kubelet's narrow handle ([`crate::cluster::Cluster`]), made from that `Arc`
//! ([`App::cluster`]) where it is needed.

pub mod exec;
pub mod exec_builtin;
pub mod exec_session;
pub mod log;
pub mod log_lines;
pub mod portforward;

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};

use crate::apiserver::app::App;
use crate::apiserver::http::{Resp, SimBody, error};
use crate::apiserver::router::Target;
use crate::status::ApiError;

/// Whether a routed request addresses a streaming pod subresource.
pub fn is_stream(t: &Target) -> bool {
    t.group.is_empty()
        && t.resource == "pods"
        && t.namespace.is_some()
        && t.name.is_some()
        && matches!(
            t.subresource.as_deref(),
            Some("portforward" | "exec" | "attach" | "log")
        )
}

/// Handles a streaming pod subresource request (already authenticated).
pub async fn handle(app: Arc<App>, req: Request<hyper::body::Incoming>, t: Target) -> Resp {
    let (Some(ns), Some(pod)) = (t.namespace.clone(), t.name.clone()) else {
        return error(&ApiError::no_route());
    };
    match t.subresource.as_deref() {
        Some("portforward") => portforward::handle(app, req, &ns, &pod).await,
        Some("exec" | "attach") => exec::handle(app, req, &ns, &pod).await,
        Some("log") => log::handle(app, req, &ns, &pod).await,
        _ => error(&ApiError::no_route()),
    }
}

/// A `101 Switching Protocols` response with `Connection: Upgrade` (the caller adds the protocol headers).
pub(crate) fn switching_protocols() -> Resp {
    let mut resp = Response::new(SimBody::Full(None));
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    resp
}

/// The WebSocket answer headers: `Upgrade`, the accept key for the request's key, and the chosen
/// sub-protocol.
pub(crate) fn websocket_headers(out: &mut HeaderMap, req: &HeaderMap, proto: Option<&'static str>) {
    out.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    let key = req
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| k.as_bytes())
        .unwrap_or_default();
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key);
    if let Ok(v) = HeaderValue::from_str(&accept) {
        out.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    if let Some(p) = proto {
        out.insert(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(p));
    }
}
